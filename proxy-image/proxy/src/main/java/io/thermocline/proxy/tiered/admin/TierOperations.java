package io.thermocline.proxy.tiered.admin;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.tiered.exchange.Replies;
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
 * {@code currentOp} (the command and the {@code $currentOp} stage) and {@code killOp} over both tiers, as mongos does
 * over shards: the operations of both are listed, each {@code opid} prefixed with its tier ({@code "fast:1234"},
 * {@code "archive:77"}, the form of mongos's {@code "shard:opid"}), and a {@code killOp} goes to the tier its prefix
 * names. An opid without a prefix is the archive's: what a DBA who knew only the archive would send.
 */
public final class TierOperations {

    private TierOperations() {}

    /** Where a {@code killOp}'s {@code op} goes. */
    public sealed interface KillTarget {
        record Routed(Tier tier, BsonValue backendOp) implements KillTarget {}

        record Malformed(String message) implements KillTarget {}
    }

    public static CompletableFuture<RawBsonDocument> currentOp(TierGateways tiers, Request request) {
        OpMsg msg = request.msg();
        CompletableFuture<RawBsonDocument> fast = tiers.send(Tier.FAST, request, msg);
        CompletableFuture<RawBsonDocument> archive = tiers.send(Tier.ARCHIVE, request, msg);
        return fast.thenCombine(archive, TierOperations::merged);
    }

    /**
     * Stages that act on each operation alone: run after {@code $currentOp} on each tier, their results concatenate
     * to the result over both tiers. A stage that combines operations ({@code $group}, {@code $sort},
     * {@code $limit}, {@code $count}, ...) would combine each tier's apart, so a pipeline holding one is refused.
     */
    private static final java.util.Set<String> PER_OPERATION_STAGES = java.util.Set.of(
            "$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith", "$redact");

    /** Whether {@code pipeline} is a {@code $currentOp} aggregation (its first stage). */
    public static boolean isCurrentOpStage(BsonArray pipeline) {
        return pipeline != null
                && !pipeline.isEmpty()
                && pipeline.get(0).isDocument()
                && pipeline.get(0).asDocument().containsKey("$currentOp");
    }

    /**
     * The {@code $currentOp} stage ({@code aggregate: 1} on {@code admin}): the pipeline runs on each tier, and the
     * operations of both come back in one batch, tier-prefixed as the command's. Each tier must answer in its first
     * batch (up to 16 MB of operations): a tier that leaves a cursor open makes the answer an error asking for a
     * narrower {@code $match}, rather than a list without its remaining operations.
     */
    public static CompletableFuture<RawBsonDocument> currentOpStage(
            TierGateways tiers, Request request, BsonDocument command) {
        OpMsg msg = request.msg();
        BsonArray pipeline = command.getArray("pipeline");
        for (BsonValue stage : pipeline.subList(1, pipeline.size())) {
            String name = stage.isDocument() && !stage.asDocument().isEmpty()
                    ? stage.asDocument().getFirstKey()
                    : "";
            if (!PER_OPERATION_STAGES.contains(name)) {
                return CompletableFuture.completedFuture(
                        MongoError.BAD_VALUE.reply("through Thermocline, the stages after"
                                + " $currentOp run on each tier apart, so they may only act on each operation alone "
                                + PER_OPERATION_STAGES.stream().sorted().toList() + "; '" + name
                                + "' would combine each tier's"
                                + " operations apart: apply it to the result in the client"));
            }
        }
        BsonDocument whole = Replies.mutable(command);
        // all of a tier's operations in its first batch: its cursor cannot be continued as part of a merged one
        whole.put("cursor", new BsonDocument("batchSize", new org.bson.BsonInt32(Integer.MAX_VALUE)));
        OpMsg sent = new OpMsg(msg.requestId(), 0, 0, OpMsg.raw(whole), List.of());
        CompletableFuture<RawBsonDocument> fast = tiers.send(Tier.FAST, request, sent);
        CompletableFuture<RawBsonDocument> archive = tiers.send(Tier.ARCHIVE, request, sent);
        return fast.thenCombine(archive, TierOperations::mergedBatches);
    }

    static RawBsonDocument mergedBatches(RawBsonDocument fast, RawBsonDocument archive) {
        for (RawBsonDocument reply : List.of(fast, archive)) {
            if (!Replies.isOk(reply)) {
                return reply;
            }
            if (Replies.cursorId(reply) != 0) {
                return MongoError.BAD_VALUE.reply(
                        "$currentOp through Thermocline: a tier listed more operations than one"
                                + " batch holds (16 MB); narrow them with a $match after $currentOp");
            }
        }
        BsonArray batch = new BsonArray();
        prefixed(Tier.FAST, firstBatch(fast), batch);
        prefixed(Tier.ARCHIVE, firstBatch(archive), batch);
        BsonDocument cursor = new BsonDocument("firstBatch", batch)
                .append("id", new BsonInt64(0))
                .append("ns", new BsonString("admin.$cmd.aggregate"));
        return OpMsg.raw(new BsonDocument("cursor", cursor).append("ok", new BsonDouble(1)));
    }

    private static BsonDocument firstBatch(BsonDocument reply) {
        BsonValue batch = reply.getDocument("cursor", new BsonDocument()).get("firstBatch");
        return new BsonDocument("inprog", batch == null ? new BsonArray() : batch);
    }

    /**
     * {@code replSetGetStatus} ({@code rs.status()}): the archive's answer at the top level, the replica set the
     * application knew, plus {@code tiers: {fast: ..., archive: ...}}, each tier's own with its members.
     */
    public static CompletableFuture<RawBsonDocument> replSetGetStatus(TierGateways tiers, Request request) {
        return withTierSections(tiers, request);
    }

    public static CompletableFuture<RawBsonDocument> killOp(TierGateways tiers, Request request, BsonDocument command) {
        OpMsg msg = request.msg();
        KillTarget target = target(command.get("op"));
        if (target instanceof KillTarget.Malformed malformed) {
            return CompletableFuture.completedFuture(MongoError.BAD_VALUE.reply(malformed.message()));
        }
        KillTarget.Routed routed = (KillTarget.Routed) target;
        BsonDocument rewritten = Replies.mutable(command);
        rewritten.put("op", routed.backendOp());
        return tiers.send(routed.tier(), request, new OpMsg(msg.requestId(), 0, 0, OpMsg.raw(rewritten), List.of()));
    }

    /**
     * {@code serverStatus} keeps the archive's answer at the top level (what tools that knew only the archive
     * read) and adds {@code tiers: {fast: ..., archive: ...}}, each tier's own answer, so the fast tier's
     * connections, opcounters and memory are visible through the proxy too.
     */
    public static CompletableFuture<RawBsonDocument> serverStatus(TierGateways tiers, Request request) {
        return withTierSections(tiers, request);
    }

    private static CompletableFuture<RawBsonDocument> withTierSections(TierGateways tiers, Request request) {
        OpMsg msg = request.msg();
        CompletableFuture<RawBsonDocument> fast = tiers.send(Tier.FAST, request, msg);
        CompletableFuture<RawBsonDocument> archive = tiers.send(Tier.ARCHIVE, request, msg);
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
                copy.put(
                        "opid",
                        new BsonString(tier.label() + ":"
                                + (opid.isNumber()
                                        ? Long.toString(opid.asNumber().longValue())
                                        : opid.isString() ? opid.asString().getValue() : opid.toString())));
            }
            copy.put("tier", new BsonString(tier.label()));
            into.add(copy);
        }
    }

    /** {@code "fast:12"} to the fast tier's 12, {@code "archive:7"} or a bare number to the archive's. */
    static KillTarget target(BsonValue op) {
        if (op == null) {
            return new KillTarget.Malformed(
                    "killOp needs op: an opid from currentOp, e.g. \"fast:1234\" or \"archive:1234\"");
        }
        if (op.isNumber()) {
            return new KillTarget.Routed(Tier.ARCHIVE, op);
        }
        if (!op.isString()) {
            return new KillTarget.Malformed(
                    "killOp op must be an opid from currentOp (\"fast:1234\", \"archive:1234\")");
        }
        String text = op.asString().getValue();
        int colon = text.indexOf(':');
        String prefix = colon < 0 ? null : text.substring(0, colon);
        String rest = colon < 0 ? text : text.substring(colon + 1);
        Tier tier = prefix == null
                ? Tier.ARCHIVE
                : prefix.equals(Tier.FAST.label())
                        ? Tier.FAST
                        : prefix.equals(Tier.ARCHIVE.label()) ? Tier.ARCHIVE : null;
        if (tier == null) {
            return new KillTarget.Malformed("killOp op '" + text + "': '" + prefix
                    + "' is not a tier; opids from currentOp" + " through Thermocline start with fast: or archive:");
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
