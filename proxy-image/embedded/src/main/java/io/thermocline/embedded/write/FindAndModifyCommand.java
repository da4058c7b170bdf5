package io.thermocline.embedded.write;

import io.netty.channel.Channel;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.storage.MemberStore;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.RawBsonDocument;

/**
 * The {@code findAndModify} command: one document found, changed and reported in one step, its reply carrying mongod's
 * lastErrorObject.
 */
final class FindAndModifyCommand {
    private final MemberStore store;
    private final Channel channel;
    private final Consumer<Change> sink;
    private final WriteExecutor.Step step;
    private final HeldDocuments heldDocuments;
    private final ChangeRecorder changes;

    FindAndModifyCommand(
            MemberStore store,
            Channel channel,
            Consumer<Change> sink,
            WriteExecutor.Step step,
            HeldDocuments heldDocuments,
            ChangeRecorder changes) {
        this.store = store;
        this.channel = channel;
        this.sink = sink;
        this.step = step;
        this.heldDocuments = heldDocuments;
        this.changes = changes;
    }

    BsonDocument execute(String db, BsonDocument command) {
        String coll = command.getString(command.getFirstKey()).getValue();
        BsonDocument filter = command.getDocument("query", new BsonDocument());
        BsonDocument sort = command.containsKey("sort") ? command.getDocument("sort") : null;
        if (command.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
            heldDocuments.awaitUpsertId(db, coll, filter);
        }
        while (true) {
            BsonDocument reply = findAndModifyOnce(db, coll, command, filter, sort);
            if (!reply.containsKey(HeldDocuments.KEY_HELD_BY)) {
                return reply;
            }
            // waits for (or, in a transaction, conflicts with) the holder of a unique key it gave, then runs again
            heldDocuments.clear(db, coll, new ArrayList<>(reply.getArray(HeldDocuments.KEY_HELD_BY)));
        }
    }

    private BsonDocument findAndModifyOnce(
            String db, String coll, BsonDocument command, BsonDocument filter, BsonDocument sort) {
        List<RawBsonDocument> found = heldDocuments.targets(db, coll, filter, sort, 1);
        RawBsonDocument pre = found.isEmpty() ? null : found.get(0);
        return step.run(() -> {
            BsonDocument reply = store.command(channel, db, command);
            if (!WriteExecutor.isOk(reply)) {
                return DuplicateKeyErrors.withKey(
                        reply, name -> DuplicateKeyErrors.indexKey(store, channel, db, coll, name));
            }
            if (!reply.isDocument("lastErrorObject")) {
                reply = withLastError(reply, lastError(db, coll, command, filter, sort, pre));
            }
            BsonDocument lastError = reply.getDocument("lastErrorObject");
            boolean remove = command.getBoolean("remove", BsonBoolean.FALSE).getValue();
            if (!remove) {
                BsonArray upserted = lastError.containsKey("upserted")
                        ? new BsonArray(List.of(new BsonDocument("_id", lastError.get("upserted"))))
                        : new BsonArray();
                BsonArray keyHeldBy =
                        heldDocuments.undoneForHeldKeys(db, coll, pre == null ? List.of() : List.of(pre), upserted);
                if (!keyHeldBy.isEmpty()) {
                    return new BsonDocument(HeldDocuments.KEY_HELD_BY, keyHeldBy);
                }
            }
            if (remove) {
                if (pre != null) {
                    sink.accept(new Change(
                            Operation.DELETE, db, coll, ChangeRecorder.key(pre.get("_id")), null, null, pre));
                }
            } else if (lastError.containsKey("upserted")) {
                changes.recordInsert(db, coll, lastError.get("upserted"));
            } else if (pre != null) {
                changes.recordModification(db, coll, pre, ChangeRecorder.isReplacement(command.get("update")));
            }
            return reply;
        });
    }

    /**
     * The {@code lastErrorObject} mongod puts in every findAndModify reply, for a storage engine reply without
     * one (an upsert with {@code new: false}): what matched before the command, or the document it upserted.
     */
    private BsonDocument lastError(
            String db, String coll, BsonDocument command, BsonDocument filter, BsonDocument sort, RawBsonDocument pre) {
        if (command.getBoolean("remove", BsonBoolean.FALSE).getValue() || pre != null) {
            BsonDocument found = new BsonDocument("n", new BsonInt32(pre == null ? 0 : 1));
            return command.getBoolean("remove", BsonBoolean.FALSE).getValue()
                    ? found
                    : new BsonDocument("updatedExisting", BsonBoolean.TRUE).append("n", new BsonInt32(1));
        }
        List<RawBsonDocument> now =
                command.getBoolean("upsert", BsonBoolean.FALSE).getValue()
                        ? store.find(db, coll, filter, sort, 1)
                        : List.of();
        BsonDocument none = new BsonDocument("updatedExisting", BsonBoolean.FALSE)
                .append("n", new BsonInt32(now.isEmpty() ? 0 : 1));
        return now.isEmpty() ? none : none.append("upserted", now.get(0).get("_id"));
    }

    private static BsonDocument withLastError(BsonDocument reply, BsonDocument lastError) {
        BsonDocument out = new BsonDocument("lastErrorObject", lastError);
        reply.forEach(out::append);
        return out;
    }
}
