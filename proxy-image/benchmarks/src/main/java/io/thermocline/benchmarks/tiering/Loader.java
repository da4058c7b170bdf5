package io.thermocline.benchmarks.tiering;

import io.thermocline.benchmarks.ycsb.MongoDbBinding;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.storage.Storage;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

/**
 * Loads the data set into the archive with YCSB's load phase ({@link DatedWorkload#doInsert},
 * inserts batched by the binding), once: the archive directory keeps it, with a note of how it was
 * loaded ({@code load.properties}: records, the newest record's date, the load rate) that later
 * runs read back.
 */
final class Loader {
    record Loaded(long records, long origin, double recordsPerSecond, double seconds) {
    }

    private Loader() {
    }

    static Loaded read(Path dir) throws IOException {
        Path note = dir.resolve("load.properties");
        if (!Files.exists(note)) {
            return null;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(note)) {
            p.load(r);
        }
        return new Loaded(Long.parseLong(p.getProperty("records")), Long.parseLong(p.getProperty("origin")),
                Double.parseDouble(p.getProperty("recordsPerSecond")), Double.parseDouble(p.getProperty("seconds")));
    }

    /**
     * Writes the records straight into the archive member's storage engine (its H2 MVStore file), as
     * restoring a backup onto a new member would: the replica set's own write path (one statement
     * at a time, each read back and logged) loads only about 1,000 records/s on this machine.
     * The archive must not be running.
     */
    static Loaded load(Properties base, Path dir, long records) throws Exception {
        long origin = System.currentTimeMillis();
        Properties p = new Properties();
        p.putAll(base);
        p.setProperty("recordcount", Long.toString(records));
        p.setProperty(DatedWorkload.LOADED, Long.toString(records));
        p.setProperty(DatedWorkload.ORIGIN, Long.toString(origin));
        DatedWorkload w = new DatedWorkload();
        w.init(p);
        long t0 = System.nanoTime();
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "member0")) {
            StoreDb db = new StoreDb(store, p.getProperty("mongodb.datefield"));
            Object state = w.initThread(p, 0, 1);
            for (long i = 0; i < records; i++) {
                if (!w.doInsert(db, state)) {
                    throw new IllegalStateException("insert " + i + " failed: " + db.lastError);
                }
                if (i > 0 && i % 100_000 == 0) {
                    System.out.printf("loaded %,d records in %.0f s%n", i, (System.nanoTime() - t0) / 1e9);
                }
            }
            db.flush();
            store.commit();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        Loaded loaded = new Loaded(records, origin, records / seconds, seconds);
        Properties note = new Properties();
        note.setProperty("records", Long.toString(records));
        note.setProperty("origin", Long.toString(origin));
        note.setProperty("recordsPerSecond", Double.toString(loaded.recordsPerSecond()));
        note.setProperty("seconds", Double.toString(seconds));
        try (Writer wr = Files.newBufferedWriter(dir.resolve("load.properties"))) {
            note.store(wr, "written by TieringBenchmark after loading");
        }
        return loaded;
    }

    /** YCSB inserts into a member's storage engine, 1,000 per insert command. */
    private static final class StoreDb extends DB {
        private final MemberStore store;
        private final String dateField;
        private BsonArray pending = new BsonArray();
        String lastError = "";

        StoreDb(MemberStore store, String dateField) {
            this.store = store;
            this.dateField = dateField;
        }

        @Override
        public Status insert(String table, String key, Map<String, ByteIterator> values) {
            pending.add(MongoDbBinding.document(values, dateField).append("_id", key).toBsonDocument());
            return pending.size() >= 1000 ? flush() : Status.BATCHED_OK;
        }

        Status flush() {
            if (pending.isEmpty()) {
                return Status.OK;
            }
            BsonDocument reply = store.command(TieringBenchmark.DATABASE, new BsonDocument("insert", new BsonString(TieringBenchmark.TABLE))
                    .append("documents", pending));
            pending = new BsonArray();
            if (reply.getNumber("ok").intValue() != 1 || reply.containsKey("writeErrors")) {
                lastError = reply.toJson();
                return Status.ERROR;
            }
            return Status.OK;
        }

        @Override
        public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
            throw new UnsupportedOperationException("the loader only inserts");
        }

        @Override
        public Status scan(String table, String startkey, int recordcount, Set<String> fields, Vector<HashMap<String, ByteIterator>> result) {
            throw new UnsupportedOperationException("the loader only inserts");
        }

        @Override
        public Status update(String table, String key, Map<String, ByteIterator> values) {
            throw new UnsupportedOperationException("the loader only inserts");
        }

        @Override
        public Status delete(String table, String key) {
            throw new UnsupportedOperationException("the loader only inserts");
        }
    }
}
