package io.thermocline.embedded.write;

import io.netty.channel.Channel;
import io.thermocline.embedded.storage.MemberStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * The {@code update} command, statement by statement: an upsert meets a held {@code _id}, a multi-document update runs
 * document by document, a write that gives a document a unique key another open transaction holds is undone and waits.
 */
final class UpdateCommand {
    private final MemberStore store;
    private final Channel channel;
    private final WriteExecutor.Step step;
    private final HeldDocuments heldDocuments;
    private final ChangeRecorder changes;

    UpdateCommand(
            MemberStore store,
            Channel channel,
            WriteExecutor.Step step,
            HeldDocuments heldDocuments,
            ChangeRecorder changes) {
        this.store = store;
        this.channel = channel;
        this.step = step;
        this.heldDocuments = heldDocuments;
        this.changes = changes;
    }

    BsonDocument execute(String db, BsonDocument command) {
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
            if (statement.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
                heldDocuments.awaitUpsertId(db, coll, filter);
            }
            List<RawBsonDocument> before = heldDocuments.targets(db, coll, filter, null, multi ? 0 : 1);
            BsonDocument reply = before.size() > 1 && byIdAlone(statement)
                    ? eachDocument(db, coll, statement, before)
                    : step.run(() -> {
                        BsonDocument r = store.command(
                                channel,
                                db,
                                new BsonDocument("update", new BsonString(coll))
                                        .append("updates", new BsonArray(List.of(statement))));
                        if (WriteExecutor.isOk(r) && !r.containsKey("writeErrors")) {
                            BsonArray keyHeldBy = heldDocuments.undoneForHeldKeys(
                                    db, coll, before, r.getArray("upserted", new BsonArray()));
                            if (!keyHeldBy.isEmpty()) {
                                return new BsonDocument(HeldDocuments.KEY_HELD_BY, keyHeldBy);
                            }
                            boolean replacement = ChangeRecorder.isReplacement(statement.get("u"));
                            for (RawBsonDocument pre : before) {
                                changes.recordModification(db, coll, pre, replacement);
                            }
                            for (BsonValue up : r.getArray("upserted", new BsonArray())) {
                                changes.recordInsert(db, coll, up.asDocument().get("_id"));
                            }
                        }
                        return r;
                    });
            if (reply.containsKey(HeldDocuments.KEY_HELD_BY)) {
                // waits for (or, in a transaction, conflicts with) the holder, then runs the statement again
                heldDocuments.clear(db, coll, new ArrayList<>(reply.getArray(HeldDocuments.KEY_HELD_BY)));
                i--;
                continue;
            }
            if (!WriteExecutor.isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeErrors")) {
                writeErrors.add(DuplicateKeyErrors.withKey(
                        WriteExecutor.reindex(
                                reply.getArray("writeErrors").get(0).asDocument(), i),
                        name -> DuplicateKeyErrors.indexKey(store, channel, db, coll, name)));
                if (ordered) {
                    break;
                }
                continue;
            }
            n += reply.getNumber("n", new BsonInt32(0)).intValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).intValue();
            for (BsonValue up : reply.getArray("upserted", new BsonArray())) {
                upserted.add(new BsonDocument("index", new BsonInt32(i))
                        .append("_id", up.asDocument().get("_id")));
            }
        }
        BsonDocument result = WriteExecutor.result(n, writeErrors);
        result.put("nModified", new BsonInt32(modified));
        if (!upserted.isEmpty()) {
            result.put("upserted", upserted);
        }
        return result;
    }

    /**
     * A multi-document update, one document at a time, each its own step (storage change and oplog entry): one
     * database applies an updateMany document by document too, and a reader never waits for more than one. Each
     * document is updated by its {@code _id} ({@link #byIdAlone}); one that no longer matches after a wait is
     * skipped, as a server re-checks a document after yielding.
     * The first write error stops the statement there, as on one database, and is its reply.
     */
    private BsonDocument eachDocument(String db, String coll, BsonDocument statement, List<RawBsonDocument> targets) {
        List<RawBsonDocument> before = new ArrayList<>(targets);
        boolean replacement = ChangeRecorder.isReplacement(statement.get("u"));
        int n = 0;
        int modified = 0;
        for (int d = 0; d < before.size(); d++) {
            RawBsonDocument pre = before.get(d);
            BsonDocument one = new BsonDocument(); // the statement may be a RawBsonDocument, immutable
            statement.forEach(one::put);
            // found under the write lock, unchanged since: its _id alone picks it, through the _id index (the
            // statement's filter would make the engine scan the collection once per document)
            one.put("q", new BsonDocument("_id", pre.get("_id")));
            one.put("multi", BsonBoolean.FALSE);
            one.put("upsert", BsonBoolean.FALSE);
            BsonDocument reply = step.run(() -> {
                BsonDocument r = store.command(
                        channel,
                        db,
                        new BsonDocument("update", new BsonString(coll))
                                .append("updates", new BsonArray(List.of(one))));
                if (WriteExecutor.isOk(r) && !r.containsKey("writeErrors")) {
                    BsonArray keyHeldBy = heldDocuments.undoneForHeldKeys(db, coll, List.of(pre), new BsonArray());
                    if (!keyHeldBy.isEmpty()) {
                        return new BsonDocument(HeldDocuments.KEY_HELD_BY, keyHeldBy);
                    }
                    changes.recordModification(db, coll, pre, replacement);
                }
                return r;
            });
            if (reply.containsKey(HeldDocuments.KEY_HELD_BY)) {
                // waits for (or, in a transaction, conflicts with) the holder, then this document again as it is
                // now, if it still matches (others wrote while the write lock was released for the wait)
                heldDocuments.clear(db, coll, new ArrayList<>(reply.getArray(HeldDocuments.KEY_HELD_BY)));
                BsonDocument stillMatching = new BsonDocument(
                        "$and",
                        new BsonArray(List.of(
                                statement.getDocument("q", new BsonDocument()),
                                new BsonDocument("_id", pre.get("_id")))));
                List<RawBsonDocument> now = store.find(db, coll, stillMatching, null, 1);
                if (!now.isEmpty()) {
                    before.set(d, now.get(0));
                    d--;
                }
                continue;
            }
            if (!WriteExecutor.isOk(reply)) {
                return reply;
            }
            n += reply.getNumber("n", new BsonInt32(0)).intValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).intValue();
            if (reply.containsKey("writeErrors")) {
                return WriteExecutor.result(n, reply.getArray("writeErrors"))
                        .append("nModified", new BsonInt32(modified));
            }
        }
        return WriteExecutor.result(n, new BsonArray()).append("nModified", new BsonInt32(modified));
    }

    /**
     * Whether each document a statement matched can be updated by its {@code _id} alone: not when the update's paths
     * use the positional {@code $} (the filter picks the array element) or a collation applies (its {@code _id}
     * equality could pick a document whose _id differs only in case), which run as one statement.
     */
    private static boolean byIdAlone(BsonDocument statement) {
        if (statement.containsKey("collation")) {
            return false;
        }
        BsonValue u = statement.get("u");
        if (u == null || !u.isDocument()) {
            return false; // a pipeline update
        }
        for (Map.Entry<String, BsonValue> operator : u.asDocument().entrySet()) {
            if (!operator.getValue().isDocument()) {
                return false;
            }
            for (String path : operator.getValue().asDocument().keySet()) {
                if (path.equals("$") || path.endsWith(".$") || path.contains(".$.")) {
                    return false;
                }
            }
        }
        return true;
    }
}
