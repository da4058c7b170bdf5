package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
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

    /** Fields that belong to the replica-set layer and that the backend must not see. */
    private static final Set<String> LAYER_FIELDS = Set.of("lsid", "txnNumber", "autocommit", "startTransaction",
        "$clusterTime", "readConcern", "writeConcern", "$readPreference", "apiVersion", "apiStrict",
        "apiDeprecationErrors", "maxTimeMS", "comment", "stmtId", "stmtIds", "$db", "let", "bypassDocumentValidation",
        "collation", "hint", "allowDiskUse", "maxAwaitTimeMS", "recoveryToken");

    private final MongoBackend backend;
    private final Channel internalChannel = new EmbeddedChannel();

    private MemberStore(MongoBackend backend) {
        this.backend = backend;
    }

    public static MemberStore open(Storage storage, String memberName) {
        if (storage instanceof Storage.Directory directory) {
            try {
                Files.createDirectories(directory.path());
            } catch (IOException e) {
                throw new IllegalStateException("cannot create storage directory " + directory.path()
                    + ": " + e.getMessage() + "; pass a writable directory", e);
            }
            Path file = directory.path().resolve(memberName + ".mv");
            MVStore store;
            try {
                store = new MVStore.Builder().fileName(file.toString()).open();
            } catch (MVStoreException e) {
                throw new IllegalStateException("cannot open " + file + ": " + e.getMessage()
                    + "; another replica set or process may be using this storage directory", e);
            }
            return new MemberStore(new H2Backend(store));
        }
        return new MemberStore(new MemoryBackend());
    }

    /** Runs a command on the backend; errors come back as {ok: 0} documents, never as exceptions. */
    public BsonDocument command(Channel channel, String database, BsonDocument command) {
        Document query = BsonBridge.toBackend(withoutLayerFields(command));
        String name = query.keySet().iterator().next();
        try {
            Document reply = backend.handleCommand(channel == null ? internalChannel : channel, database, name, query);
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

    public static BsonDocument withoutLayerFields(BsonDocument command) {
        BsonDocument copy = new BsonDocument();
        for (var entry : command.entrySet()) {
            if (!LAYER_FIELDS.contains(entry.getKey())) {
                copy.put(entry.getKey(), entry.getValue());
            }
        }
        return copy;
    }

    /** Documents matching a filter in natural order (or by sort), at most limit (0 = all). */
    public List<RawBsonDocument> find(String database, String collection, BsonDocument filter, BsonDocument sort, int limit) {
        Optional<MongoCollection<?>> coll = collection(database, collection);
        if (coll.isEmpty()) {
            return List.of();
        }
        Document selector = new Document("$query", BsonBridge.toBackend(filter));
        if (sort != null && !sort.isEmpty()) {
            selector.put("$orderby", BsonBridge.toBackend(sort));
        }
        List<RawBsonDocument> result = new ArrayList<>();
        for (Document document : coll.get().handleQuery(new QueryParameters(selector, 0, limit))) {
            result.add(BsonBridge.fromBackend(document));
        }
        return result;
    }

    public Optional<RawBsonDocument> findById(String database, String collection, BsonValue id) {
        List<RawBsonDocument> found = find(database, collection, new BsonDocument("_id", id), null, 1);
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    /** Idempotent application of a post-image, as a secondary applies an oplog entry. */
    public void upsert(String database, String collection, BsonDocument document) {
        BsonDocument update = new BsonDocument("q", new BsonDocument("_id", document.get("_id")))
            .append("u", document).append("upsert", BsonBoolean.TRUE);
        check(command(database, new BsonDocument("update", new BsonString(collection))
            .append("updates", new BsonArray(List.of(update))).append("ordered", BsonBoolean.TRUE)));
    }

    public void deleteById(String database, String collection, BsonValue id) {
        BsonDocument delete = new BsonDocument("q", new BsonDocument("_id", id)).append("limit", new BsonInt32(1));
        check(command(database, new BsonDocument("delete", new BsonString(collection))
            .append("deletes", new BsonArray(List.of(delete)))));
    }

    public void dropCollection(String database, String collection) {
        if (collection(database, collection).isPresent()) {
            command(database, new BsonDocument("drop", new BsonString(collection)));
        }
    }

    public void dropDatabase(String database) {
        backend.dropDatabase(database);
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

    /** Replaces this store's content with a copy of another's (initial sync after a rollback). */
    public void copyFrom(MemberStore source) {
        for (String db : databaseNames()) {
            dropDatabase(db);
        }
        for (String db : source.databaseNames()) {
            for (String coll : source.collectionNames(db)) {
                command(db, new BsonDocument("create", new BsonString(coll)));
                List<BsonDocument> indexes = new ArrayList<>();
                for (BsonDocument index : source.indexes(db, coll)) {
                    if (!"_id_".equals(index.getString("name", new BsonString("")).getValue())) {
                        BsonDocument spec = BsonBridge.mutable(index);
                        spec.remove("v");
                        spec.remove("ns");
                        indexes.add(spec);
                    }
                }
                if (!indexes.isEmpty()) {
                    command(db, new BsonDocument("createIndexes", new BsonString(coll))
                        .append("indexes", new BsonArray(indexes)));
                }
                List<RawBsonDocument> documents = source.find(db, coll, new BsonDocument(), null, 0);
                for (int i = 0; i < documents.size(); i += 1000) {
                    command(db, new BsonDocument("insert", new BsonString(coll))
                        .append("documents", new BsonArray(new ArrayList<>(documents.subList(i, Math.min(documents.size(), i + 1000))))));
                }
            }
        }
    }

    public Optional<MongoCollection<?>> collection(String database, String collection) {
        MongoDatabase db = backend.resolveDatabase(database);
        return Optional.ofNullable(db.resolveCollection(collection, false));
    }

    public void handleClose(Channel channel) {
        backend.handleClose(channel);
    }

    /** Makes acknowledged writes durable (H2 commits its MVStore; memory has nothing to do). */
    public void commit() {
        if (backend instanceof H2Backend h2) {
            h2.commit();
        }
    }

    @Override
    public void close() {
        commit();
        backend.close();
    }

    private static void check(BsonDocument reply) {
        if (!reply.containsKey("ok") || reply.get("ok").asNumber().intValue() != 1
            || reply.containsKey("writeErrors")) {
            throw new IllegalStateException("storage engine refused a replicated write: " + reply.toJson());
        }
    }

    public static BsonDocument okReply() {
        return new BsonDocument("ok", new BsonDouble(1));
    }

    public static BsonDocument errorReply(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString(message))
            .append("code", new BsonInt32(code)).append("codeName", new BsonString(codeName == null ? "Error" : codeName));
    }
}
