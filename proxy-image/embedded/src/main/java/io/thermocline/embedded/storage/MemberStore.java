package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;

/**
 * One member's storage and query engine: a mongo-java-server backend used in-process.
 * Everything crossing this class is org.bson; the backend's own document model stays inside.
 */
public final class MemberStore implements AutoCloseable {

    /** Commands that change no stored document: they share their collections (see {@link StoreLocks}). */
    private static final Set<String> READ_ONLY = Set.of(
            "find",
            "aggregate",
            "count",
            "distinct",
            "getmore",
            "listcollections",
            "listindexes",
            "listdatabases",
            "dbstats",
            "collstats",
            "datasize",
            "serverstatus",
            "buildinfo",
            "ismaster",
            "ping",
            "getlasterror",
            "whatsmyuri",
            "getlog",
            "hostinfo",
            "connectionstatus");

    private final MongoBackend backend;
    private final DiskFailures diskFailures;
    /**
     * Held (shared) by every walk of the store's trees and (exclusive) by {@link #close}: H2's close asserts that no
     * version is still registered ({@code AssertionError: N != N+1} in {@code MVStore.closeStore}, seen under load in
     * the on-disk runs even after the set waited for its members' commands), so a walk in progress ends first and a
     * later one waits, then meets a closed store.
     */
    private final java.util.concurrent.locks.ReentrantReadWriteLock walks =
            new java.util.concurrent.locks.ReentrantReadWriteLock();

    private final Channel internalChannel = new EmbeddedChannel();
    private final StoreLocks locks = new StoreLocks();
    private final SecondaryIndexScan secondaryIndexes = new SecondaryIndexScan(locks);
    private final SnapshotQueries queries = new SnapshotQueries(
            this::engine,
            (database, collection, filter, limit) -> find(database, collection, filter, null, limit),
            this::findThroughSecondaryIndex,
            locks);
    private final IdIndexScan idIndex = new IdIndexScan(locks);

    MemberStore(MongoBackend backend) {
        this(backend, new DiskFailures());
    }

    MemberStore(MongoBackend backend, DiskFailures diskFailures) {
        this.backend = backend;
        this.diskFailures = diskFailures;
    }

    public static MemberStore open(Storage storage, String memberName) {
        if (storage instanceof Storage.Directory directory) {
            try {
                Files.createDirectories(directory.path());
            } catch (IOException e) {
                throw new IllegalStateException(
                        "cannot create storage directory " + directory.path() + ": " + e.getMessage()
                                + "; pass a writable directory",
                        e);
            }
            Path file = directory.path().resolve(memberName + ".mv");
            MVStore store;
            DiskFailures failures = new DiskFailures();
            try {
                // H2's compaction rewrites live pages into new chunks and drops the old chunks at once, while a walk
                // of a tree as it was (the order check below, a long query) still reads them: that walk then fails with
                // "Chunk N not found". So no compaction: a chunk is dropped only once writes replaced all of it
                // (docs/embedded-replica-set.md, "The H2 version"). And no background writer at all: the set's flush
                // (Durability: after each acknowledged write, and every second) is the only writer, so a disk that
                // refuses a write refuses it to a flush, which closes the store at once and switches writes off. A
                // background write the disk refused left the store open with H2's panic pending, and a close then
                // spun forever (the oplog's case, issue 40)
                store = new MVStore.Builder()
                        .fileName(directory.h2Name(memberName + ".mv"))
                        .autoCommitDisabled()
                        .autoCompactFillRate(0)
                        .backgroundExceptionHandler(failures)
                        .open();
            } catch (MVStoreException e) {
                throw new IllegalStateException(
                        "cannot open " + file + ": " + e.getMessage()
                                + "; another replica set or process may be using this storage directory",
                        e);
            }
            return new MemberStore(new OrderedH2Backend(store), failures);
        }
        return new MemberStore(new OrderedMemoryBackend());
    }

    /**
     * Runs a command on the backend; errors come back as {ok: 0} documents, never as exceptions. Queries
     * return copies of the documents as they matched (see {@link SnapshotCursors}); read commands share their
     * collections, and every other command has its collection alone ({@link StoreLocks}), since the engine
     * changes stored documents in place while a reader may still be copying them.
     */
    public BsonDocument command(Channel channel, String database, BsonDocument command) {
        String name = command.getFirstKey().toLowerCase(Locale.ROOT);
        switch (name) {
            case "find", "aggregate" -> {
                if (name.equals("find") || !StoreLocks.writesOutput(command)) {
                    return queries.query(channel, database, name, command);
                }
            }
            case "getmore" -> {
                Optional<BsonDocument> more = queries.more(database, command);
                if (more.isPresent()) {
                    return more.get();
                }
            }
            case "killcursors" -> {
                return queries.killCursors(channel, database, command);
            }
            default -> {}
        }
        return READ_ONLY.contains(name)
                ? locks.reading(database, command, () -> engine(channel, database, command))
                : locks.writing(database, command, () -> engine(channel, database, command));
    }

    private BsonDocument engine(Channel channel, String database, BsonDocument command) {
        Document query = BsonBridge.toBackend(LayerFields.removedFrom(command));
        String name = query.keySet().iterator().next();
        try {
            Document reply = walking(
                    () -> backend.handleCommand(channel == null ? internalChannel : channel, database, name, query));
            return reply == null ? okReply() : BsonBridge.fromBackend(reply);
        } catch (MongoServerError e) {
            return errorReply(e.getCode(), e.getCodeName(), e.getMessageWithoutErrorCode());
        } catch (MongoServerException e) {
            return errorReply(8000, "InternalError", e.getMessageWithoutErrorCode());
        } catch (RuntimeException e) {
            return errorReply(1, "InternalError", "storage engine failed: " + e);
        }
    }

    public BsonDocument command(String database, BsonDocument command) {
        return command(null, database, command);
    }

    /** Documents matching a filter in natural order (or by sort), at most limit (0 = all). */
    public List<RawBsonDocument> find(
            String database, String collection, BsonDocument filter, BsonDocument sort, int limit) {
        Optional<MongoCollection<?>> coll = collection(database, collection);
        if (coll.isEmpty()) {
            return List.of();
        }
        Optional<IdIndexScan.IdRestricted> byId =
                sort == null || sort.isEmpty() ? IdIndexScan.idCondition(filter) : Optional.empty();
        if (byId.isPresent()) {
            return idIndex.find(coll.get(), database, collection, byId.get(), limit);
        }
        Document selector = new Document("$query", BsonBridge.toBackend(filter));
        if (sort != null && !sort.isEmpty()) {
            selector.put("$orderby", BsonBridge.toBackend(sort));
        }
        // copied under the collection's read lock: the engine hands out the stored documents, which writes change in
        // place
        return locks.readingCollection(
                database,
                collection,
                () -> walking(() -> {
                    List<RawBsonDocument> result = new ArrayList<>();
                    for (Document document : coll.get().handleQuery(new QueryParameters(selector, 0, limit))) {
                        result.add(BsonBridge.fromBackend(document));
                    }
                    return result;
                }));
    }

    /**
     * A find sorted on a secondary index's keys, walked through the index ({@link SecondaryIndexScan}); empty when no
     * index fits it or the walk failed (the engine then answers, with its own error if it has one).
     */
    private Optional<List<RawBsonDocument>> findThroughSecondaryIndex(String database, BsonDocument command) {
        Optional<SecondaryIndexScan.Request> request = SecondaryIndexScan.request(command);
        if (request.isEmpty()) {
            return Optional.empty();
        }
        Optional<MongoCollection<?>> coll = collection(database, request.get().collection());
        if (coll.isEmpty()) {
            return Optional.empty();
        }
        try {
            return secondaryIndexes.find(coll.get(), database, request.get(), this::walking);
        } catch (RuntimeException e) {
            // the engine answers instead, with the same error when the find itself is wrong (a bad projection)
            org.slf4j.LoggerFactory.getLogger(MemberStore.class)
                    .debug(
                            "event=secondaryIndexWalkLeftToEngine namespace={}.{} error=\"{}\"",
                            database,
                            request.get().collection(),
                            e.toString());
            return Optional.empty();
        }
    }

    /** How many finds a secondary index's walk answered (tests check that a find took the plan). */
    public long findsThroughSecondaryIndexes() {
        return secondaryIndexes.answered();
    }

    /** How many index entries those walks read. */
    public long secondaryIndexEntriesWalked() {
        return secondaryIndexes.entriesWalked();
    }

    /**
     * Runs a step that walks the store's trees with the version it starts from registered at H2, so the chunks that
     * version reads stay until the step ends: without it H2 may drop a chunk whose pages writes or a compaction copied
     * elsewhere while the walk still needs it ("Chunk N not found"; docs/embedded-replica-set.md, "The H2 version").
     */
    private <T> T walking(java.util.function.Supplier<T> step) {
        if (!(backend instanceof H2Backend h2)) {
            return step.get();
        }
        walks.readLock().lock();
        try {
            MVStore store = h2.getMvStore();
            MVStore.TxCounter version = store.registerVersionUsage();
            try {
                return step.get();
            } finally {
                store.deregisterVersionUsage(version);
            }
        } finally {
            walks.readLock().unlock();
        }
    }

    public Optional<RawBsonDocument> findById(String database, String collection, BsonValue id) {
        List<RawBsonDocument> found = find(database, collection, new BsonDocument("_id", id), null, 1);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    /** Idempotent application of a post-image, as a secondary applies an oplog entry. */
    public void upsert(String database, String collection, BsonDocument document) {
        BsonDocument update = new BsonDocument("q", new BsonDocument("_id", document.get("_id")))
                .append("u", document)
                .append("upsert", BsonBoolean.TRUE);
        check(command(
                database,
                new BsonDocument("update", new BsonString(collection))
                        .append("updates", new BsonArray(List.of(update)))
                        .append("ordered", BsonBoolean.TRUE)));
    }

    public void deleteById(String database, String collection, BsonValue id) {
        BsonDocument delete = new BsonDocument("q", new BsonDocument("_id", id)).append("limit", new BsonInt32(1));
        check(command(
                database,
                new BsonDocument("delete", new BsonString(collection))
                        .append("deletes", new BsonArray(List.of(delete)))));
    }

    public void dropCollection(String database, String collection) {
        if (collection(database, collection).isPresent()) {
            command(database, new BsonDocument("drop", new BsonString(collection)));
        }
    }

    public void dropDatabase(String database) {
        locks.alone(() -> {
            backend.dropDatabase(database);
            return null;
        });
    }

    public List<String> databaseNames() {
        BsonDocument reply = command("admin", new BsonDocument("listDatabases", new BsonInt32(1)));
        List<String> names = new ArrayList<>();
        for (BsonValue db : reply.getArray("databases", new BsonArray())) {
            names.add(db.asDocument().getString("name").getValue());
        }
        return names;
    }

    public List<String> collectionNames(String database) {
        BsonDocument reply = command(database, new BsonDocument("listCollections", new BsonInt32(1)));
        List<String> names = new ArrayList<>();
        if (reply.containsKey("cursor")) {
            for (BsonValue c : reply.getDocument("cursor").getArray("firstBatch")) {
                names.add(c.asDocument().getString("name").getValue());
            }
        }
        return names;
    }

    public List<BsonDocument> indexes(String database, String collection) {
        BsonDocument reply = command(database, new BsonDocument("listIndexes", new BsonString(collection)));
        List<BsonDocument> result = new ArrayList<>();
        if (reply.containsKey("cursor")) {
            for (BsonValue c : reply.getDocument("cursor").getArray("firstBatch")) {
                result.add(c.asDocument());
            }
        }
        return result;
    }

    public Optional<MongoCollection<?>> collection(String database, String collection) {
        MongoDatabase db = backend.resolveDatabase(database);
        return Optional.ofNullable(db.resolveCollection(collection, false));
    }

    public void handleClose(Channel channel) {
        backend.handleClose(channel);
    }

    /**
     * Makes acknowledged writes durable (H2 commits its MVStore; memory has nothing to do); throws when the store can
     * no longer write (H2 closed it after a write the disk refused).
     */
    public void commit() {
        if (backend instanceof H2Backend h2) {
            DiskFailures.requireOpen(h2.getMvStore(), "the member store");
            h2.commit();
            DiskFailures.requireOpen(h2.getMvStore(), "the member store");
        }
    }

    /** Calls {@code listener} with each write the disk refused in H2's background, before H2 closes the store. */
    public void onDiskFailure(java.util.function.Consumer<Throwable> listener) {
        diskFailures.listen(listener);
    }

    @Override
    public void close() {
        boolean alone = false;
        try {
            alone = walks.writeLock().tryLock(CLOSE_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!alone) {
            org.slf4j.LoggerFactory.getLogger(MemberStore.class)
                    .warn("event=storeWalkStillRunning waited={} action=closing_anyway", CLOSE_WAIT);
        }
        try {
            commit();
            backend.close();
        } finally {
            if (alone) {
                walks.writeLock().unlock();
            }
        }
    }

    /** How long {@link #close} waits for a walk in progress (a query on a loaded machine takes well under this). */
    private static final java.time.Duration CLOSE_WAIT = java.time.Duration.ofSeconds(30);

    private static void check(BsonDocument reply) {
        if (!reply.containsKey("ok")
                || reply.get("ok").asNumber().intValue() != 1
                || reply.containsKey("writeErrors")) {
            throw new IllegalStateException("storage engine refused a replicated write: " + reply.toJson());
        }
    }

    public static BsonDocument okReply() {
        return new BsonDocument("ok", new BsonDouble(1));
    }

    public static BsonDocument errorReply(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName == null ? "Error" : codeName));
    }
}
