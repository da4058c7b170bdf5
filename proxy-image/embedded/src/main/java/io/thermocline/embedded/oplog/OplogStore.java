package io.thermocline.embedded.oplog;

import io.thermocline.embedded.storage.DiskFailures;
import io.thermocline.embedded.storage.Storage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;

/** Keeps the oplog on disk (an H2 MVStore next to the members' data) so resume tokens survive restarts. */
public final class OplogStore {
    private static final String TRIMMED_KEY = "trimmedThrough";
    private final MVStore store;
    private final DiskFailures diskFailures = new DiskFailures();
    private final MVMap<String, byte[]> entries;
    private final MVMap<String, String> meta;

    public OplogStore(Storage.Directory storage) {
        Path directory = storage.path();
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create storage directory " + directory + ": " + e.getMessage(), e);
        }
        try {
            // written only by commit() (Durability's flush) and close(), never by H2 in the background: a background
            // write the disk refuses leaves the store open with H2's panic pending, and H2 2.3's close() then waits
            // for its own close forever (its commit meets the panic and calls closeImmediately, which spins on the
            // store it is itself stopping). A refused foreground commit closes the store at once and throws.
            store = new MVStore.Builder()
                    .fileName(storage.h2Name("oplog.mv"))
                    .autoCommitDisabled()
                    .backgroundExceptionHandler(diskFailures)
                    .open();
        } catch (MVStoreException e) {
            throw new IllegalStateException(
                    "cannot open the oplog in " + directory + ": " + e.getMessage()
                            + "; another replica set or process may be using this storage directory",
                    e);
        }
        entries = store.openMap("oplog");
        meta = store.openMap("meta");
    }

    public List<OplogEntry> load() {
        List<OplogEntry> result = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            result.add(OplogEntry.fromBson(new RawBsonDocument(e.getValue())));
        }
        return result;
    }

    public OplogPosition trimmedThrough() {
        String value = meta.get(TRIMMED_KEY);
        if (value == null) {
            return OplogPosition.ORIGIN;
        }
        return parse(value);
    }

    public void append(List<OplogEntry> batch) {
        for (OplogEntry entry : batch) {
            BsonDocument bson = entry.toBson();
            ByteBuffer buffer = new RawBsonDocument(bson, new BsonDocumentCodec())
                    .getByteBuffer()
                    .asNIO();
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            entries.put(entry.position().key(), bytes);
        }
    }

    public void remove(OplogPosition position, OplogPosition trimmed) {
        entries.remove(position.key());
        meta.put(TRIMMED_KEY, trimmed.key());
    }

    /** How far a member had applied the oplog when last flushed (null: unknown, replay everything). */
    public OplogPosition applied(int member) {
        String value = meta.get("applied." + member);
        return value == null ? null : parse(value);
    }

    public void saveApplied(int member, OplogPosition position) {
        meta.put("applied." + member, position.key());
    }

    private static OplogPosition parse(String key) {
        return new OplogPosition(
                Long.parseUnsignedLong(key.substring(0, 16), 16), (int) Long.parseLong(key.substring(16), 16));
    }

    /** Writes the oplog to disk; throws when it cannot (H2 closed the store after a write the disk refused). */
    public void commit() {
        DiskFailures.requireOpen(store, "the oplog store");
        store.commit();
        DiskFailures.requireOpen(store, "the oplog store");
    }

    /** Calls {@code listener} with each write the disk refused, before H2 closes the store. */
    public void onDiskFailure(java.util.function.Consumer<Throwable> listener) {
        diskFailures.listen(listener);
    }

    /** Writes what is left and closes; on a disk that refuses the write, throws it once closed (none of it was acknowledged). */
    public void close() {
        store.close();
    }
}
