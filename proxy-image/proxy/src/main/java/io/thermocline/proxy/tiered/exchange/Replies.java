package io.thermocline.proxy.tiered.exchange;

import io.thermocline.proxy.causal.PassThroughCausalPoint;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/** Reading server replies and shaping commands and errors for the tiered paths. */
public final class Replies {

    private Replies() {}

    public static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }

    public static BsonTimestamp operationTime(BsonDocument reply) {
        BsonValue t = reply.get("operationTime");
        return t != null && t.isTimestamp() ? t.asTimestamp() : null;
    }

    /** The {@code readConcern.afterClusterTime} a client sent (its session's causal point), or null. */
    public static BsonTimestamp afterClusterTime(BsonDocument command) {
        return PassThroughCausalPoint.of(command);
    }

    /** The reply with its {@code operationTime} set to {@code time} (a fast-tier time). */
    public static RawBsonDocument withOperationTime(RawBsonDocument reply, BsonTimestamp time) {
        return CommandEnvelope.edit(reply, Map.of(), Set.of(), new BsonDocument("operationTime", time));
    }

    /** True when a read reply holds no result: an exhausted empty cursor, {@code n: 0}, or no distinct values. */
    public static boolean empty(String command, BsonDocument reply) {
        if (!isOk(reply)) {
            return false;
        }
        if (command.equals("count")) {
            BsonValue n = reply.get("n");
            return n != null && n.isNumber() && n.asNumber().longValue() == 0;
        }
        if (command.equals("distinct")) {
            BsonValue values = reply.get("values");
            return values != null && values.isArray() && values.asArray().isEmpty();
        }
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument()) {
            return false;
        }
        BsonValue id = cursor.asDocument().get("id");
        BsonValue batch = cursor.asDocument().get("firstBatch");
        return id != null
                && id.isNumber()
                && id.asNumber().longValue() == 0
                && batch != null
                && batch.isArray()
                && batch.asArray().isEmpty();
    }

    /** The id of a cursor reply's cursor, 0 when there is none. */
    public static long cursorId(BsonDocument reply) {
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument()) {
            return 0;
        }
        BsonValue id = cursor.asDocument().get("id");
        return id != null && id.isNumber() ? id.asNumber().longValue() : 0;
    }

    /** The first document of a cursor reply's first batch, or null. */
    public static BsonDocument firstDocument(BsonDocument reply) {
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument()) {
            return null;
        }
        BsonValue batch = cursor.asDocument().get("firstBatch");
        return batch != null
                        && batch.isArray()
                        && !batch.asArray().isEmpty()
                        && batch.asArray().get(0).isDocument()
                ? batch.asArray().get(0).asDocument()
                : null;
    }

    /**
     * The command as the tiered path sends it to a tier: the proxy decides causality itself (a client's
     * {@code afterClusterTime} names one tier's clock and means nothing to the other), and tiered reads
     * go to primaries, whose view covers every acknowledged write.
     */
    public static OpMsg forTier(OpMsg msg) {
        BsonValue readConcern = msg.body().get("readConcern");
        boolean causal = readConcern != null
                && readConcern.isDocument()
                && (readConcern.asDocument().containsKey("afterClusterTime")
                        || readConcern.asDocument().containsKey("afterOpTime"));
        if (!causal && !msg.body().containsKey("$readPreference")) {
            return msg;
        }
        Map<String, BsonValue> replace = Map.of();
        if (causal) {
            BsonDocument rc = mutable(readConcern.asDocument()); // a raw document's clone is raw, hence immutable
            rc.remove("afterClusterTime");
            rc.remove("afterOpTime");
            replace = Map.of("readConcern", rc);
        }
        RawBsonDocument body = CommandEnvelope.edit(msg.body(), replace, Set.of("$readPreference"), new BsonDocument());
        return new OpMsg(msg.requestId(), 0, 0, body, msg.sequences());
    }

    /** A top-level mutable copy (commands arrive as immutable raw documents). */
    public static BsonDocument mutable(BsonDocument document) {
        BsonDocument copy = new BsonDocument();
        document.forEach(copy::append);
        return copy;
    }

    /** A new command body (no kind-1 sequences) built from the folded command. */
    public static OpMsg rewritten(BsonDocument command) {
        return new OpMsg(0, 0, 0, OpMsg.raw(command), List.of());
    }

    /** The labels a driver retries a refused command by: its transaction, or its retryable write. */
    public static List<String> retryLabels(Exchange x) {
        if (x.traits().inTransaction()) {
            return List.of("TransientTransactionError");
        }
        return x.traits().retryableWrite() ? List.of("RetryableWriteError") : List.of();
    }
}
