package io.thermocline.proxy.tiered.reads;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.causal.PointReadSkip;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.PipelineRouter;
import io.thermocline.proxy.routing.ReadRoute;
import io.thermocline.proxy.routing.ReadRouter;
import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.proxy.tiered.exchange.TieredCursors;
import io.thermocline.proxy.tiered.exchange.TieringFollower;
import io.thermocline.proxy.tiered.writes.Promotion;
import io.thermocline.proxy.topology.InvalidReadPreference;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Reads of tiered collections (find, count, distinct, aggregate): the fast tier when the coverage
 * proves it holds the whole answer and still does when the answer is back, the fast tier first for a
 * point read (then the archive, promoting what it finds), otherwise the archive past the read barrier;
 * and the getMore batches of their cursors, checked against the proof they were opened under.
 */
public final class TieredReads {

    private final TieringFollower follower;
    private final CausalTiers tiers;
    private final TieredCursors cursors;
    private final Promotion promotion;
    private final Fences fences;
    private final RoutingMetrics metrics;

    public TieredReads(
            TieringFollower follower,
            CausalTiers tiers,
            TieredCursors cursors,
            Promotion promotion,
            Fences fences,
            RoutingMetrics metrics) {
        this.follower = follower;
        this.tiers = tiers;
        this.cursors = cursors;
        this.promotion = promotion;
        this.fences = fences;
        this.metrics = metrics;
    }

    /** A find, count or distinct on a tiered collection. */
    public RawBsonDocument read(Exchange x, CommandClass.Read read) throws InterruptedException {
        Predicate<RoutingTable> servesFast = t -> ReadRouter.route(
                        read.filter(),
                        t.policy(read.namespace()).orElse(null),
                        t.coverage(read.namespace()),
                        read.collation())
                instanceof ReadRoute.FastTier;
        ReadRoute route = ReadRouter.route(
                read.filter(),
                x.table().policy(read.namespace()).orElse(null),
                x.table().coverage(read.namespace()),
                read.collation());
        return read(x, read.commandName(), read.namespace(), route, servesFast);
    }

    /** An aggregation touching a tiered collection, already routed on every namespace it names. */
    public RawBsonDocument aggregate(Exchange x, CommandClass.Aggregate aggregate, ReadRoute route)
            throws InterruptedException {
        String ns = aggregate.collection() == null
                ? aggregate.database()
                : aggregate.database() + "." + aggregate.collection();
        Predicate<RoutingTable> servesFast =
                t -> PipelineRouter.route(aggregate.database(), aggregate.collection(), aggregate.pipeline(), t)
                        instanceof ReadRoute.FastTier;
        return read(x, "aggregate", ns, route, servesFast);
    }

    private RawBsonDocument read(
            Exchange x, String command, String namespace, ReadRoute route, Predicate<RoutingTable> servesFast)
            throws InterruptedException {
        Optional<BsonDocument> secondaries;
        try {
            secondaries = SecondaryPermission.of(
                    x.command(),
                    x.table().policy(namespace).orElse(null),
                    x.traits().inTransaction());
        } catch (InvalidReadPreference e) {
            return (e.kind() == InvalidReadPreference.Kind.MAX_STALENESS_OUT_OF_RANGE
                            ? MongoError.MAX_STALENESS_OUT_OF_RANGE
                            : MongoError.BAD_VALUE)
                    .reply(e.getMessage(), List.of());
        }
        if (route instanceof ReadRoute.FastTier) {
            return fastRead(x, route, servesFast, secondaries);
        }
        if (route instanceof ReadRoute.Refused refused) {
            metrics.decided("read", Served.REFUSED, refused.reason());
            return MongoError.COMMAND_NOT_SUPPORTED.reply(refused.message(), List.of());
        }
        if (route instanceof ReadRoute.PointReadFastFirst point && !zeroBatch(x.command())) {
            return pointRead(x, command, namespace, point, secondaries);
        }
        metrics.decided("read", Served.ARCHIVE, route.reason());
        return tiers.archive(x, Replies.forTier(x.msg()), secondaries);
    }

    /**
     * A read the coverage proves the fast tier can answer. The proof holds while no evictor can have
     * deleted under a bound this proxy has not seen: if the view of the state went stale, or a bound
     * seen since the decision no longer covers the read, by the time the answer is back, the archive
     * answers instead (a fast-tier cursor left open is swept as idle).
     */
    private RawBsonDocument fastRead(
            Exchange x, ReadRoute route, Predicate<RoutingTable> servesFast, Optional<BsonDocument> secondaries)
            throws InterruptedException {
        OpMsg msg = Replies.forTier(x.msg());
        RawBsonDocument reply = tiers.fast(x, msg);
        if (!follower.stillServes(x.decided(), servesFast)) {
            metrics.decided("read", Served.ARCHIVE, Reason.COVERAGE_CHANGED_DURING_READ);
            return tiers.archive(x, msg, secondaries);
        }
        metrics.decided("read", Served.FAST, route.reason());
        cursors.opened(
                Replies.cursorId(reply),
                new TieredCursors.FastTier(x.decided(), servesFast),
                x.traits().noCursorTimeout());
        return reply;
    }

    /** Whether a find's first document is the stored document itself (no projection, index key or record id instead). */
    private static boolean answersWholeDocument(BsonDocument find) {
        return !find.containsKey("projection") && !find.containsKey("returnKey") && !find.containsKey("showRecordId");
    }

    /** A find with batchSize 0 leaves an open cursor and an empty batch: not an answer a miss can be read from. */
    private static boolean zeroBatch(BsonDocument command) {
        BsonValue batch = command.get("batchSize");
        return batch != null && batch.isNumber() && batch.asNumber().intValue() == 0;
    }

    private RawBsonDocument pointRead(
            Exchange x,
            String command,
            String namespace,
            ReadRoute.PointReadFastFirst point,
            Optional<BsonDocument> secondaries)
            throws InterruptedException {
        OpMsg msg = Replies.forTier(x.msg());
        RawBsonDocument fastReply = tiers.fast(x, msg);
        if (!Replies.empty(command, fastReply)) {
            metrics.decided("read", Served.FAST, point.reason());
            return fastReply;
        }
        long fencesRead = System.nanoTime();
        Map<BsonValue, Fence> fenced =
                fencesSeenBy(fastReply, command, namespace, Fences.withDropFence(List.of(point.id())));
        Fence fence = fenced.get(point.id());
        if (fence != null && fence.kind() == Fence.Kind.USER_DELETE) {
            // deleted by a user after any archived version: the archive may still hold it until the feeder catches up
            metrics.decided("read", Served.FAST, point.reason());
            return fastReply;
        }
        metrics.decided("read", Served.ARCHIVE, point.reason());
        // absent from the fast tier after the read arrived and never fenced: the archive already holds every write to
        // it
        boolean skipped = PointReadSkip.allowed(command, x.command(), fence != null);
        RawBsonDocument archived =
                skipped ? tiers.archiveWithoutWait(x, msg, secondaries) : tiers.archive(x, msg, secondaries);
        BsonDocument document = Replies.firstDocument(archived);
        CollectionPolicy policy = x.table().policy(namespace).orElse(null);
        if (document != null
                && policy != null
                && command.equals("find")
                && !x.command().containsKey("projection")) {
            if (skipped
                    && secondaries.isEmpty()
                    && !fenced.containsKey(Fence.namespaceId())
                    && answersWholeDocument(x.command())) {
                // the archive's primary read it after a fence read that found nothing: that is the copy's own archive
                // read
                promotion.promoteReadIfHot(policy, document, fencesRead);
            } else {
                promotion.promoteIfHot(policy, document);
            }
        }
        return archived;
    }

    /**
     * The fences of {@code ids} as of at least what the fast-tier read that answered {@code fastReply} saw: that read
     * may show a removal a majority has not applied yet, and the proof that lets a miss skip the barrier needs the
     * removal's fence then (docs/consistency.md, "Point reads that skip the barrier").
     */
    private Map<BsonValue, Fence> fencesSeenBy(
            RawBsonDocument fastReply, String command, String namespace, List<BsonValue> ids) {
        org.bson.BsonTimestamp seen = Replies.operationTime(fastReply);
        BsonValue clusterTime = fastReply.get("$clusterTime");
        try {
            return fences.readAfter(
                    seen,
                    clusterTime != null && clusterTime.isDocument() ? clusterTime.asDocument() : null,
                    tiers.causalWaitTimeout(),
                    namespace,
                    ids);
        } catch (com.mongodb.MongoExecutionTimeoutException e) {
            throw io.thermocline.proxy.causal.CausalWaitTimeout.notMajorityCommitted(
                    command, seen, tiers.causalWaitTimeout());
        }
    }

    /**
     * A getMore batch of a tiered read (empty: not one): from the fast tier only while its coverage
     * proof still holds (otherwise the batch may miss documents evicted since the cursor opened: the
     * client must re-run the query, which is then routed with the current bounds); from the archive
     * with the fast-tier operationTime its first batch had.
     */
    public Optional<RawBsonDocument> checkedBatch(long proxyCursorId, RawBsonDocument reply) {
        TieredCursors.Basis basis = cursors.get(proxyCursorId);
        if (basis == null) {
            return Optional.empty();
        }
        if (Replies.cursorId(reply) == 0 || !Replies.isOk(reply)) {
            cursors.closed(proxyCursorId);
        }
        if (basis instanceof TieredCursors.FastTier fast && !follower.stillServes(fast.decided(), fast.servesFast())) {
            cursors.closed(proxyCursorId);
            metrics.decided("get_more", Served.REFUSED, Reason.COVERAGE_CHANGED_DURING_READ);
            return Optional.of(MongoError.QUERY_PLAN_KILLED.reply(
                    "this cursor read the fast tier"
                            + " under a coverage bound that no longer holds (the evictor may have removed documents it would return, or"
                            + " this proxy could not refresh the tiering state within the propagation delay); re-run the query: it is"
                            + " routed with the current bounds",
                    List.of()));
        }
        if (basis instanceof TieredCursors.Archive archived && Replies.isOk(reply)) {
            return Optional.of(Replies.withOperationTime(reply, archived.mirroredThrough()));
        }
        return Optional.of(reply);
    }
}
