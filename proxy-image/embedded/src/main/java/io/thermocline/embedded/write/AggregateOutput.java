package io.thermocline.embedded.write;

import io.netty.channel.Channel;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.storage.MemberStore;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/** An aggregate ending in $out or $merge: its changes are the difference of the target collection before and after. */
final class AggregateOutput {
    private final MemberStore store;
    private final Channel channel;
    private final Consumer<Change> sink;
    private final WriteExecutor.Step step;
    private final HeldDocuments heldDocuments;

    AggregateOutput(
            MemberStore store,
            Channel channel,
            Consumer<Change> sink,
            WriteExecutor.Step step,
            HeldDocuments heldDocuments) {
        this.store = store;
        this.channel = channel;
        this.sink = sink;
        this.step = step;
        this.heldDocuments = heldDocuments;
    }

    /** The (database, collection) an aggregate writes to, when its last stage is $out or $merge. */
    static Optional<String[]> outputOf(String db, BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        if (pipeline == null || !pipeline.isArray() || pipeline.asArray().isEmpty()) {
            return Optional.empty();
        }
        BsonValue last = pipeline.asArray().get(pipeline.asArray().size() - 1);
        if (!last.isDocument() || last.asDocument().isEmpty()) {
            return Optional.empty();
        }
        String stage = last.asDocument().getFirstKey();
        BsonValue target = last.asDocument().get(stage);
        if (stage.equals("$merge") && target.isDocument()) {
            target = target.asDocument().get("into");
        } else if (!stage.equals("$out")) {
            return Optional.empty();
        }
        if (target == null) {
            return Optional.empty();
        }
        if (target.isString()) {
            return Optional.of(new String[] {db, target.asString().getValue()});
        }
        BsonDocument ns = target.asDocument();
        return Optional.of(new String[] {
            ns.getString("db", new BsonString(db)).getValue(),
            ns.getString("coll").getValue()
        });
    }

    BsonDocument write(String db, BsonDocument command) {
        String[] target = outputOf(db, command).orElseThrow();
        Map<BsonValue, RawBsonDocument> before = new LinkedHashMap<>();
        heldDocuments
                .targets(target[0], target[1], new BsonDocument(), null, 0)
                .forEach(d -> before.put(d.get("_id"), d));
        return step.run(() -> {
            BsonDocument reply = store.command(channel, db, command);
            if (!WriteExecutor.isOk(reply)) {
                return reply;
            }
            for (RawBsonDocument after : store.find(target[0], target[1], new BsonDocument(), null, 0)) {
                BsonValue id = after.get("_id");
                RawBsonDocument old = before.remove(id);
                if (old == null) {
                    sink.accept(new Change(
                            Operation.INSERT, target[0], target[1], ChangeRecorder.key(id), after, null, null));
                } else if (!old.equals(after)) {
                    sink.accept(new Change(
                            Operation.REPLACE, target[0], target[1], ChangeRecorder.key(id), after, null, old));
                }
            }
            before.forEach((id, old) -> sink.accept(
                    new Change(Operation.DELETE, target[0], target[1], ChangeRecorder.key(id), null, null, old)));
            return reply;
        });
    }
}
