package io.thermocline.proxy.tiered.admin;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.tiered.Replies;
import io.thermocline.proxy.tiered.TierCall;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * {@code currentOp} and {@code killOp} over both tiers, as mongos does over shards: the operations of
 * both are listed, each {@code opid} prefixed with its tier ({@code "fast:1234"}, {@code "archive:77"}, the
 * form of mongos's {@code "shard:opid"}), and a {@code killOp} goes to the tier its prefix names. An opid
 * without a prefix is the archive's: what a DBA who knew only the archive would send.
 */
public final class TierOperations {

    private TierOperations() {
    }

    /** Where a {@code killOp}'s {@code op} goes. */
    public sealed interface KillTarget {
        record Routed(Tier tier, BsonValue backendOp) implements KillTarget {
        }

        record Malformed(String message) implements KillTarget {
        }
    }

    public static CompletableFuture<RawBsonDocument> currentOp(TierCall call, OpMsg msg) {
        CompletableFuture<RawBsonDocument> fast = call.call(Tier.FAST, msg);
        CompletableFuture<RawBsonDocument> archive = call.call(Tier.ARCHIVE, msg);
        return fast.thenCombine(archive, TierOperations::merged);
    }

    public static CompletableFuture<RawBsonDocument> killOp(TierCall call, OpMsg msg, BsonDocument command) {
        KillTarget target = target(command.get("op"));
        if (target instanceof KillTarget.Malformed malformed) {
            return CompletableFuture.completedFuture(MongoError.BAD_VALUE.reply(malformed.message()));
        }
        KillTarget.Routed routed = (KillTarget.Routed) target;
        BsonDocument rewritten = Replies.mutable(command);
        rewritten.put("op", routed.backendOp());
        return call.call(routed.tier(), new OpMsg(msg.requestId(), 0, 0, OpMsg.raw(rewritten), List.of()));
    }

    /**
     * {@code serverStatus} keeps the archive's answer at the top level (what tools that knew only the archive
     * read) and adds {@code tiers: {fast: ..., archive: ...}}, each tier's own answer, so the fast tier's
     * connections, opcounters and memory are visible through the proxy too.
     */
    public static CompletableFuture<RawBsonDocument> serverStatus(TierCall call, OpMsg msg) {
        CompletableFuture<RawBsonDocument> fast = call.call(Tier.FAST, msg);
        CompletableFuture<RawBsonDocument> archive = call.call(Tier.ARCHIVE, msg);
        return fast.thenCombine(archive, TierOperations::withTierSections);
    }

    static RawBsonDocument withTierSections(RawBsonDocument fast, RawBsonDocument archive) {
        if (!Replies.isOk(archive)) {
            return archive;
        }
        BsonDocument reply = Replies.mutable(archive);
        reply.remove("ok");
        BsonDocument tiers = new BsonDocument("fast", section(fast)).append("archive", section(archive));
        reply.append("tiers", tiers).append("ok", new BsonDouble(1));
        return OpMsg.raw(reply);
    }

    /** A tier's answer without the envelope fields that belong to the reply as a whole. */
    private static BsonDocument section(RawBsonDocument reply) {
        BsonDocument s = Replies.mutable(reply);
        for (String envelope : List.of("ok", "operationTime", "$clusterTime")) {
            if (!envelope.equals("ok") || Replies.isOk(reply)) {
                s.remove(envelope);
            }
        }
        return s;
    }

    /** Both tiers' {@code inprog}, tier-prefixed; a tier's error is the answer (a list without its operations would mislead). */
    static RawBsonDocument merged(RawBsonDocument fast, RawBsonDocument archive) {
        if (!Replies.isOk(fast)) {
            return fast;
        }
        if (!Replies.isOk(archive)) {
            return archive;
        }
        BsonArray inprog = new BsonArray();
        prefixed(Tier.FAST, fast, inprog);
        prefixed(Tier.ARCHIVE, archive, inprog);
        return OpMsg.raw(new BsonDocument("inprog", inprog).append("ok", new BsonDouble(1)));
    }

    private static void prefixed(Tier tier, BsonDocument reply, BsonArray into) {
        BsonValue ops = reply.get("inprog");
        if (ops == null || !ops.isArray()) {
            return;
        }
        for (BsonValue op : ops.asArray()) {
            if (!op.isDocument()) {
                continue;
            }
            BsonDocument copy = Replies.mutable(op.asDocument());
            BsonValue opid = copy.get("opid");
            if (opid != null) {
                copy.put("opid", new BsonString(tier.label() + ":" + (opid.isNumber() ? Long.toString(opid.asNumber().longValue())
                        : opid.isString() ? opid.asString().getValue() : opid.toString())));
            }
            copy.put("tier", new BsonString(tier.label()));
            into.add(copy);
        }
    }

    /** {@code "fast:12"} to the fast tier's 12, {@code "archive:7"} or a bare number to the archive's. */
    static KillTarget target(BsonValue op) {
        if (op == null) {
            return new KillTarget.Malformed("killOp needs op: an opid from currentOp, e.g. \"fast:1234\" or \"archive:1234\"");
        }
        if (op.isNumber()) {
            return new KillTarget.Routed(Tier.ARCHIVE, op);
        }
        if (!op.isString()) {
            return new KillTarget.Malformed("killOp op must be an opid from currentOp (\"fast:1234\", \"archive:1234\")");
        }
        String text = op.asString().getValue();
        int colon = text.indexOf(':');
        String prefix = colon < 0 ? null : text.substring(0, colon);
        String rest = colon < 0 ? text : text.substring(colon + 1);
        Tier tier = prefix == null ? Tier.ARCHIVE : prefix.equals(Tier.FAST.label()) ? Tier.FAST
                : prefix.equals(Tier.ARCHIVE.label()) ? Tier.ARCHIVE : null;
        if (tier == null) {
            return new KillTarget.Malformed("killOp op '" + text + "': '" + prefix + "' is not a tier; opids from currentOp"
                    + " through Thermocline start with fast: or archive:");
        }
        try {
            long id = Long.parseLong(rest);
            return new KillTarget.Routed(tier, id == (int) id ? new org.bson.BsonInt32((int) id) : new BsonInt64(id));
        } catch (NumberFormatException e) {
            // a sharded archive's opids are "shard:opid" themselves: pass what follows the tier on as it is
            return new KillTarget.Routed(tier, new BsonString(rest));
        }
    }
}
