package io.thermocline.embedded.write;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.oplog.UpdateDescriptions;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.MemberStore;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.types.ObjectId;

/**
 * Runs write commands on the primary's storage one document statement at a time and reports each
 * document it changed (with pre- and post-image) to a sink, which stamps them into the oplog or
 * stages them in a transaction. The caller holds the write lock.
 */
public final class WriteExecutor {
    private static final Set<String> DDL = Set.of("create", "createindexes", "dropindexes", "collmod");

    private final MemberStore store;
    private final Channel channel;
    private final Consumer<Change> sink;

    public WriteExecutor(MemberStore store, Channel channel, Consumer<Change> sink) {
        this.store = store;
        this.channel = channel;
        this.sink = sink;
    }

    public static boolean isWrite(String commandName) {
        String name = commandName.toLowerCase();
        return switch (name) {
            case "insert", "update", "delete", "findandmodify", "drop", "dropdatabase", "renamecollection" -> true;
            default -> DDL.contains(name);
        };
    }

    public BsonDocument execute(String db, String commandName, BsonDocument command) {
        return switch (commandName.toLowerCase()) {
            case "insert" -> insert(db, command);
            case "update" -> update(db, command);
            case "delete" -> delete(db, command);
            case "findandmodify" -> findAndModify(db, command);
            case "drop" -> drop(db, command);
            case "dropdatabase" -> dropDatabase(db);
            case "renamecollection" -> rename(command);
            default -> ddl(db, command);
        };
    }

    private BsonDocument insert(String db, BsonDocument command) {
        String coll = command.getString("insert").getValue();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray documents = command.getArray("documents", new BsonArray());
        BsonArray writeErrors = new BsonArray();
        int n = 0;
        for (int i = 0; i < documents.size(); i++) {
            BsonDocument document = withId(documents.get(i).asDocument());
            BsonDocument reply = store.command(channel, db, new BsonDocument("insert", new BsonString(coll))
                .append("documents", new BsonArray(List.of(document))));
            if (!isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeErrors")) {
                writeErrors.add(reindex(reply.getArray("writeErrors").get(0).asDocument(), i));
                if (ordered) {
                    break;
                }
                continue;
            }
            n++;
            sink.accept(new Change(Operation.INSERT, db, coll, key(document.get("_id")), document, null, null));
        }
        return result(n, writeErrors);
    }

    private BsonDocument update(String db, BsonDocument command) {
        String coll = command.getString("update").getValue();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray statements = command.getArray("updates", new BsonArray());
        BsonArray writeErrors = new BsonArray();
        BsonArray upserted = new BsonArray();
        int n = 0;
        int modified = 0;
        for (int i = 0; i < statements.size(); i++) {
            BsonDocument statement = statements.get(i).asDocument();
            boolean multi = statement.getBoolean("multi", BsonBoolean.FALSE).getValue();
            BsonDocument filter = statement.getDocument("q", new BsonDocument());
            List<RawBsonDocument> before = store.find(db, coll, filter, null, multi ? 0 : 1);
            BsonDocument reply = store.command(channel, db, new BsonDocument("update", new BsonString(coll))
                .append("updates", new BsonArray(List.of(statement))));
            if (!isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeErrors")) {
                writeErrors.add(reindex(reply.getArray("writeErrors").get(0).asDocument(), i));
                if (ordered) {
                    break;
                }
                continue;
            }
            n += reply.getNumber("n", new BsonInt32(0)).intValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).intValue();
            boolean replacement = isReplacement(statement.get("u"));
            for (RawBsonDocument pre : before) {
                recordModification(db, coll, pre, replacement);
            }
            for (BsonValue up : reply.getArray("upserted", new BsonArray())) {
                BsonValue id = up.asDocument().get("_id");
                upserted.add(new BsonDocument("index", new BsonInt32(i)).append("_id", id));
                store.findById(db, coll, id).ifPresent(post ->
                    sink.accept(new Change(Operation.INSERT, db, coll, key(id), post, null, null)));
            }
        }
        BsonDocument result = result(n, writeErrors);
        result.put("nModified", new BsonInt32(modified));
        if (!upserted.isEmpty()) {
            result.put("upserted", upserted);
        }
        return result;
    }

    private void recordModification(String db, String coll, RawBsonDocument pre, boolean replacement) {
        BsonValue id = pre.get("_id");
        Optional<RawBsonDocument> post = store.findById(db, coll, id);
        if (post.isEmpty() || post.get().equals(pre)) {
            return;
        }
        if (replacement) {
            sink.accept(new Change(Operation.REPLACE, db, coll, key(id), post.get(), null, pre));
        } else {
            sink.accept(new Change(Operation.UPDATE, db, coll, key(id), post.get(),
                UpdateDescriptions.diff(pre, post.get()), pre));
        }
    }

    private BsonDocument delete(String db, BsonDocument command) {
        String coll = command.getString("delete").getValue();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray statements = command.getArray("deletes", new BsonArray());
        int n = 0;
        BsonArray writeErrors = new BsonArray();
        for (int i = 0; i < statements.size(); i++) {
            BsonDocument statement = statements.get(i).asDocument();
            int limit = statement.getNumber("limit", new BsonInt32(0)).intValue();
            BsonDocument filter = statement.getDocument("q", new BsonDocument());
            List<RawBsonDocument> victims;
            try {
                victims = store.find(db, coll, filter, null, limit == 1 ? 1 : 0);
            } catch (RuntimeException e) {
                writeErrors.add(new BsonDocument("index", new BsonInt32(i)).append("code", new BsonInt32(2))
                    .append("errmsg", new BsonString("bad delete filter: " + e.getMessage())));
                if (ordered) {
                    break;
                }
                continue;
            }
            for (RawBsonDocument victim : victims) {
                store.deleteById(db, coll, victim.get("_id"));
                n++;
                sink.accept(new Change(Operation.DELETE, db, coll, key(victim.get("_id")), null, null, victim));
            }
        }
        return result(n, writeErrors);
    }

    private BsonDocument findAndModify(String db, BsonDocument command) {
        String coll = command.getString(command.getFirstKey()).getValue();
        BsonDocument filter = command.getDocument("query", new BsonDocument());
        BsonDocument sort = command.containsKey("sort") ? command.getDocument("sort") : null;
        List<RawBsonDocument> found = store.find(db, coll, filter, sort, 1);
        RawBsonDocument pre = found.isEmpty() ? null : found.get(0);
        BsonDocument reply = store.command(channel, db, command);
        if (!isOk(reply)) {
            return reply;
        }
        if (command.getBoolean("remove", BsonBoolean.FALSE).getValue()) {
            if (pre != null) {
                sink.accept(new Change(Operation.DELETE, db, coll, key(pre.get("_id")), null, null, pre));
            }
            return reply;
        }
        BsonDocument lastError = reply.getDocument("lastErrorObject", new BsonDocument());
        if (lastError.containsKey("upserted")) {
            BsonValue id = lastError.get("upserted");
            store.findById(db, coll, id).ifPresent(post ->
                sink.accept(new Change(Operation.INSERT, db, coll, key(id), post, null, null)));
        } else if (pre != null) {
            recordModification(db, coll, pre, isReplacement(command.get("update")));
        }
        return reply;
    }

    private BsonDocument drop(String db, BsonDocument command) {
        String coll = command.getString("drop").getValue();
        if (store.collection(db, coll).isEmpty()) {
            return MemberStore.errorReply(26, "NamespaceNotFound", "ns not found");
        }
        BsonDocument reply = store.command(channel, db, command);
        if (isOk(reply)) {
            sink.accept(new Change(Operation.DROP, db, coll, null, null, null, null));
        }
        return reply;
    }

    private BsonDocument dropDatabase(String db) {
        List<String> collections = store.collectionNames(db);
        store.dropDatabase(db);
        for (String coll : collections) {
            sink.accept(new Change(Operation.DROP, db, coll, null, null, null, null));
        }
        sink.accept(new Change(Operation.DROP_DATABASE, db, null, null, null, null, null));
        return new BsonDocument("dropped", new BsonString(db)).append("ok", new BsonDouble(1));
    }

    private BsonDocument rename(BsonDocument command) {
        String from = command.getString("renameCollection").getValue();
        String to = command.getString("to").getValue();
        BsonDocument reply = store.command(channel, "admin", command);
        if (isOk(reply)) {
            int dot = from.indexOf('.');
            sink.accept(new Change(Operation.RENAME, from.substring(0, dot), from.substring(dot + 1), null,
                new BsonDocument("to", new BsonString(to)), null, null));
        }
        return reply;
    }

    private BsonDocument ddl(String db, BsonDocument command) {
        BsonDocument reply = store.command(channel, db, command);
        if (isOk(reply)) {
            BsonDocument replayable = MemberStore.withoutLayerFields(command);
            String coll = command.get(command.getFirstKey()).isString() ? command.getString(command.getFirstKey()).getValue() : null;
            sink.accept(new Change(Operation.COMMAND, db, coll, null, replayable, null, null));
        }
        return reply;
    }

    private static BsonDocument withId(BsonDocument document) {
        if (document.containsKey("_id")) {
            return document;
        }
        BsonDocument withId = new BsonDocument("_id", new BsonObjectId(new ObjectId()));
        withId.putAll(BsonBridge.mutable(document));
        return withId;
    }

    private static boolean isReplacement(BsonValue update) {
        if (update == null || !update.isDocument()) {
            return false;
        }
        BsonDocument u = update.asDocument();
        return u.isEmpty() || !u.getFirstKey().startsWith("$");
    }

    private static BsonDocument key(BsonValue id) {
        return new BsonDocument("_id", id);
    }

    private static BsonDocument reindex(BsonDocument writeError, int index) {
        BsonDocument copy = BsonBridge.mutable(writeError);
        copy.put("index", new BsonInt32(index));
        return copy;
    }

    private static BsonDocument result(int n, BsonArray writeErrors) {
        BsonDocument result = new BsonDocument("n", new BsonInt32(n));
        if (!writeErrors.isEmpty()) {
            result.put("writeErrors", writeErrors);
        }
        result.put("ok", new BsonDouble(1));
        return result;
    }

    public static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }
}
