package io.thermocline.proxy.tiered.admin;

import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Storage statistics of tiered data as one replica set would give them ({@code dbStats}, {@code collStats}, the
 * {@code $collStats} stage, {@code listDatabases}): each document counted once, the disk of both tiers counted.
 *
 * <p>The fast tier holds copies of the recent documents, which the feeder mirrors to the archive, so the archive
 * holds every document: counts and logical sizes ({@code count}, {@code objects}, {@code size}, {@code dataSize},
 * {@code avgObjSize}, index counts) are the archive's, and lag the fast tier by the feeder's lag (a write not mirrored
 * yet is not in them; {@code countDocuments} through the proxy is exact). What takes disk ({@code storageSize},
 * index sizes, {@code totalSize}, free space, {@code sizeOnDisk}) is summed over both tiers. Each tier's own answer is
 * in {@code tiers: {fast, archive}}; a fast tier that cannot answer leaves the archive's numbers, with its error in its
 * section. Namespaces and databases without a tiered collection are the archive's alone, as before.
 */
public final class TierStatistics {

    /** Fields that measure disk, which both tiers use: summed. Every other field is the archive's. */
    private static final Set<String> DISK = Set.of(
            "storageSize",
            "freeStorageSize",
            "indexSize",
            "indexFreeStorageSize",
            "totalIndexSize",
            "totalSize",
            "totalFreeStorageSize");

    private TierStatistics() {}

    /** {@code dbStats} of a database holding a tiered collection. */
    public static CompletableFuture<RawBsonDocument> dbStats(TierGateways tiers, Request request) {
        return both(tiers, request).thenApply(r -> withTierSections(r.fast(), r.archive(), TierStatistics::summed));
    }

    /** {@code collStats} of a tiered collection. */
    public static CompletableFuture<RawBsonDocument> collStats(TierGateways tiers, Request request) {
        return both(tiers, request).thenApply(r -> withTierSections(r.fast(), r.archive(), TierStatistics::summed));
    }

    /** Whether {@code pipeline} is a {@code $collStats} stage alone (later stages would need the merged document). */
    public static boolean isCollStatsAlone(BsonArray pipeline) {
        return pipeline != null
                && pipeline.size() == 1
                && pipeline.get(0).isDocument()
                && pipeline.get(0).asDocument().containsKey("$collStats");
    }

    /**
     * The {@code $collStats} stage on a tiered collection: one document, as one replica set gives, whose
     * {@code storageStats} is summed as {@code collStats} is and whose {@code count} is the archive's.
     */
    public static CompletableFuture<RawBsonDocument> collStatsStage(TierGateways tiers, Request request) {
        return both(tiers, request).thenApply(r -> {
            BsonDocument archiveStats = Replies.isOk(r.archive()) ? onlyDocument(r.archive()) : null;
            if (archiveStats == null) {
                return r.archive();
            }
            // a fast tier that cannot answer leaves the archive's numbers, with its error in its section
            BsonDocument fastStats = Replies.isOk(r.fast()) ? onlyDocument(r.fast()) : section(r.fast());
            BsonDocument merged = Replies.mutable(archiveStats);
            if (fastStats != null && archiveStats.isDocument("storageStats") && fastStats.isDocument("storageStats")) {
                merged.put(
                        "storageStats",
                        summed(archiveStats.getDocument("storageStats"), fastStats.getDocument("storageStats")));
            }
            merged.append(
                    "tiers",
                    new BsonDocument("fast", fastStats == null ? new BsonDocument() : fastStats)
                            .append("archive", archiveStats));
            BsonDocument cursor = Replies.mutable(r.archive().getDocument("cursor"));
            cursor.put("firstBatch", new BsonArray(List.of(merged)));
            BsonDocument reply = Replies.mutable(r.archive());
            reply.put("cursor", cursor);
            return OpMsg.raw(reply);
        });
    }

    /**
     * {@code listDatabases}: each database holding a tiered collection takes the fast tier's {@code sizeOnDisk} too,
     * and {@code totalSize} with it; the list stays the archive's (the fast tier's metadata database is Thermocline's,
     * not the application's).
     */
    public static CompletableFuture<RawBsonDocument> listDatabases(
            TierGateways tiers, Request request, RoutingTable table) {
        return both(tiers, request).thenApply(r -> listDatabases(r.fast(), r.archive(), table));
    }

    static RawBsonDocument listDatabases(RawBsonDocument fast, RawBsonDocument archive, RoutingTable table) {
        if (!Replies.isOk(archive)
                || !Replies.isOk(fast)
                || !archive.isArray("databases")
                || !fast.isArray("databases")) {
            return archive;
        }
        BsonDocument fastSizes = new BsonDocument();
        for (BsonValue db : fast.getArray("databases")) {
            if (db.isDocument()
                    && db.asDocument().isString("name")
                    && db.asDocument().isNumber("sizeOnDisk")) {
                fastSizes.put(
                        db.asDocument().getString("name").getValue(),
                        db.asDocument().get("sizeOnDisk"));
            }
        }
        BsonDocument reply = Replies.mutable(archive);
        BsonArray databases = new BsonArray();
        BsonValue added = new BsonInt32(0);
        for (BsonValue db : reply.getArray("databases")) {
            if (!db.isDocument() || !db.asDocument().isString("name")) {
                databases.add(db);
                continue;
            }
            BsonDocument entry = Replies.mutable(db.asDocument());
            String name = entry.getString("name").getValue();
            BsonValue fastSize = fastSizes.get(name);
            if (table.hasTieredCollectionIn(name) && fastSize != null && entry.isNumber("sizeOnDisk")) {
                entry.put("sizeOnDisk", plus(entry.get("sizeOnDisk"), fastSize));
                entry.put("empty", org.bson.BsonBoolean.valueOf(false));
                added = plus(added, fastSize);
            }
            databases.add(entry);
        }
        reply.put("databases", databases);
        if (reply.isNumber("totalSize")) {
            BsonValue total = plus(reply.get("totalSize"), added);
            reply.put("totalSize", total);
            if (reply.containsKey("totalSizeMb")) {
                reply.put("totalSizeMb", new BsonInt64(total.asNumber().longValue() / (1024 * 1024)));
            }
        }
        return OpMsg.raw(reply);
    }

    /** The archive's statistics with the disk fields summed over both tiers ({@code indexSizes} per index). */
    static BsonDocument summed(BsonDocument archive, BsonDocument fast) {
        BsonDocument out = Replies.mutable(archive);
        for (String field : DISK) {
            if (archive.isNumber(field) && fast.isNumber(field)) {
                out.put(field, plus(archive.get(field), fast.get(field)));
            }
        }
        if (archive.isDocument("indexSizes") && fast.isDocument("indexSizes")) {
            BsonDocument sizes = Replies.mutable(archive.getDocument("indexSizes"));
            fast.getDocument("indexSizes").forEach((index, size) -> {
                BsonValue mine = sizes.get(index);
                if (size.isNumber()) {
                    sizes.put(index, mine != null && mine.isNumber() ? plus(mine, size) : size);
                }
            });
            out.put("indexSizes", sizes);
        }
        return out;
    }

    private interface Merge {
        BsonDocument apply(BsonDocument archive, BsonDocument fast);
    }

    /** The archive's answer with {@code merge}'s fields, and each tier's own answer in {@code tiers}. */
    private static RawBsonDocument withTierSections(RawBsonDocument fast, RawBsonDocument archive, Merge merge) {
        if (!Replies.isOk(archive)) {
            return archive;
        }
        BsonDocument reply = Replies.isOk(fast) ? merge.apply(archive, fast) : Replies.mutable(archive);
        reply.remove("ok");
        reply.append("tiers", new BsonDocument("fast", section(fast)).append("archive", section(archive)))
                .append("ok", new BsonDouble(1));
        return OpMsg.raw(reply);
    }

    private static BsonDocument section(RawBsonDocument reply) {
        BsonDocument s = Replies.mutable(reply);
        s.remove("operationTime");
        s.remove("$clusterTime");
        if (Replies.isOk(reply)) {
            s.remove("ok");
        }
        return s;
    }

    private static BsonDocument onlyDocument(BsonDocument reply) {
        BsonValue batch =
                reply.isDocument("cursor") ? reply.getDocument("cursor").get("firstBatch") : null;
        return batch != null
                        && batch.isArray()
                        && batch.asArray().size() == 1
                        && batch.asArray().get(0).isDocument()
                ? batch.asArray().get(0).asDocument()
                : null;
    }

    /** A sum of two server numbers, in the narrowest type that holds it (int, long, double), as mongod chooses. */
    static BsonValue plus(BsonValue a, BsonValue b) {
        if (a.isDouble() || b.isDouble() || a.isDecimal128() || b.isDecimal128()) {
            return new BsonDouble(a.asNumber().doubleValue() + b.asNumber().doubleValue());
        }
        long sum = a.asNumber().longValue() + b.asNumber().longValue();
        return sum == (int) sum ? new BsonInt32((int) sum) : new BsonInt64(sum);
    }

    private record TierReplies(RawBsonDocument fast, RawBsonDocument archive) {}

    private static CompletableFuture<TierReplies> both(TierGateways tiers, Request request) {
        OpMsg msg = request.msg();
        CompletableFuture<RawBsonDocument> fast = tiers.send(Tier.FAST, request, msg);
        CompletableFuture<RawBsonDocument> archive = tiers.send(Tier.ARCHIVE, request, msg);
        return fast.thenCombine(archive, TierReplies::new);
    }
}
