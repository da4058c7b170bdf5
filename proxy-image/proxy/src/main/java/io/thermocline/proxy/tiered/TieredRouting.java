package io.thermocline.proxy.tiered;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.causal.CausalPoints;
import io.thermocline.proxy.causal.CausalWaitTimeout;
import io.thermocline.proxy.causal.PointReadSkip;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.CommandClassifier;
import io.thermocline.proxy.routing.PipelineRouter;
import io.thermocline.proxy.routing.ReadRoute;
import io.thermocline.proxy.routing.ReadRouter;
import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.routing.RoutingExplanation;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.routing.TransactionRoute;
import io.thermocline.proxy.routing.TransactionRouter;
import io.thermocline.proxy.routing.TransactionTier;
import io.thermocline.proxy.server.CommandTraits;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.tiered.RoutingMetrics.Served;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tiered proxy's decisions and I/O around them. The dispatcher offers every command; this class
 * claims the ones that touch tiered namespaces (reads, pipelines, writes, DDL, explain, transactions
 * that reached the fast tier) and leaves everything else to the pass-through path. Claimed commands
 * run on a worker pool, because they may wait (causal point, sync barrier, promotion) and the
 * network threads must not.
 */
public final class TieredRouting implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TieredRouting.class);

    private final TieringFollower follower;
    private final CausalPoints causal;
    private final ReadBarrier barrier;
    private final TieredCursors cursors = new TieredCursors(100_000);
    private final Promotion promotion;
    private final TieredWrites writes;
    private final Fences fences;
    private final ExecutorService workers;
    private final AutoCloseable resources;
    private final Map<SessionKey, PinnedTransaction> transactions = new ConcurrentHashMap<>();
    private final java.util.Set<Long> changeStreams = ConcurrentHashMap.newKeySet();
    private final OwnTransactionLedger ledger;
    private final io.thermocline.tiering.metadata.MetadataStore store;
    private final java.util.concurrent.atomic.AtomicBoolean metadataStarted = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean metadataReady;
    private volatile RoutingMetrics metrics = new RoutingMetrics(new PrometheusRegistry());

    private record PinnedTransaction(long txnNumber, TransactionTier tier) {
    }

    TieredRouting(TieringFollower follower, CausalPoints causal, ReadBarrier barrier, Promotion promotion,
                  TieredWrites writes, Fences fences, OwnTransactionLedger ledger,
                  io.thermocline.tiering.metadata.MetadataStore store, ExecutorService workers, AutoCloseable resources) {
        this.ledger = ledger;
        this.store = store;
        this.follower = follower;
        this.causal = causal;
        this.barrier = barrier;
        this.promotion = promotion;
        this.writes = writes;
        this.fences = fences;
        this.workers = workers;
        this.resources = resources;
    }

    /** Counts decisions in the proxy's registry (called once by the server that owns this). */
    public void countIn(PrometheusRegistry registry) {
        this.metrics = new RoutingMetrics(registry);
        writes.metrics(metrics);
        writes.barrierWaitsIn(io.thermocline.tiering.metrics.BarrierWaits.in(registry, "proxy"));
        String mode = barrier.mode().configName();
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder().name("thermocline_proxy_read_barrier_total")
                .help("Archive-routed reads by how they passed the read barrier: no_wait (causal point already mirrored),"
                        + " probed (a fast-tier probe, then already mirrored), waited (waited for the feeder), timed_out,"
                        + " skipped (point reads of documents absent from the fast tier and never fenced: nothing to wait for)")
                .labelNames("mode", "outcome").callback(cb -> {
                    ReadBarrier.Counts c = barrier.counts();
                    cb.call(c.immediate(), mode, "no_wait");
                    cb.call(c.probed(), mode, "probed");
                    cb.call(c.waitedForFeeder(), mode, "waited");
                    cb.call(c.timedOut(), mode, "timed_out");
                    cb.call(c.skipped(), mode, "skipped");
                }).register(registry);
    }

    /** How archive-routed reads passed the read barrier so far. */
    public ReadBarrier.Counts readBarrierCounts() {
        return barrier.counts();
    }

    public RoutingMetrics metrics() {
        return metrics;
    }

    public RoutingTable table() {
        return follower.table();
    }

    /**
     * Claims a command when it involves tiered data; empty leaves it to the pass-through path. The
     * classification is pure and cheap, so it runs on the network thread; the work does not.
     */
    public Optional<CompletableFuture<RawBsonDocument>> route(TieredRequest request, TierCall call) {
        TieringFollower.Decided decided = follower.decide();
        RoutingTable table = decided.table();
        if (table.policies().isEmpty()) {
            return Optional.empty();
        }
        OpMsg msg = request.msg();
        BsonDocument command = msg.command();
        CommandTraits traits = CommandTraits.of(msg.commandName(), command);
        Optional<SessionKey> session = traits.session();
        CommandClass cls = CommandClassifier.classify(command, msg.database(), table);
        Exchange x = new Exchange(request, call, command, traits, session, decided);
        ensureMetadata();
        if (traits.inTransaction() || traits.endsTransaction()) {
            return transaction(x, cls);
        }
        if (cls instanceof CommandClass.Read || cls instanceof CommandClass.Write || cls instanceof CommandClass.Ddl
                || cls instanceof CommandClass.Rejected) {
            return Optional.of(run(x, () -> serve(x, cls)));
        }
        if (cls instanceof CommandClass.Aggregate aggregate) {
            ReadRoute route = PipelineRouter.route(aggregate.database(), aggregate.collection(), aggregate.pipeline(), table);
            if (route instanceof ReadRoute.Archive a && a.reason() == Reason.UNTIERED_NAMESPACE) {
                return Optional.empty();
            }
            if (route.reason() == Reason.CHANGE_STREAM_ON_FAST_TIER) {
                return Optional.of(run(x, () -> changeStream(x, route)));
            }
            String ns = aggregate.collection() == null ? aggregate.database() : aggregate.database() + "." + aggregate.collection();
            Predicate<RoutingTable> servesFast = t -> PipelineRouter.route(aggregate.database(), aggregate.collection(),
                    aggregate.pipeline(), t) instanceof ReadRoute.FastTier;
            return Optional.of(run(x, () -> read(x, "aggregate", ns, route, servesFast)));
        }
        if (cls instanceof CommandClass.Explain explain && tiered(explain.explained())) {
            return Optional.of(run(x, () -> explain(x, cls)));
        }
        return Optional.empty();
    }

    /**
     * Creates the metadata collections once (tombstones and promotions write them inside transactions,
     * where implicit creation is not allowed everywhere); retried on the next command after a failure.
     */
    private void ensureMetadata() {
        if (metadataReady || !metadataStarted.compareAndSet(false, true)) {
            return;
        }
        workers.execute(() -> {
            try {
                store.ensureCollections();
                metadataReady = true;
            } catch (RuntimeException e) {
                LOG.warn("event=metadata_collections_not_ready error={}", e.toString());
            } finally {
                metadataStarted.set(false);
            }
        });
    }

    private static boolean tiered(CommandClass cls) {
        return cls instanceof CommandClass.Read || cls instanceof CommandClass.Write || cls instanceof CommandClass.Ddl
                || cls instanceof CommandClass.Aggregate || cls instanceof CommandClass.Rejected;
    }

    private interface Work {
        RawBsonDocument run() throws InterruptedException;
    }

    private CompletableFuture<RawBsonDocument> run(Exchange x, Work work) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return withCausalPoint(x, work.run());
            } catch (CausalWaitTimeout e) {
                return Replies.error(Replies.EXCEEDED_TIME_LIMIT, "ExceededTimeLimit", e.getMessage(), retryLabels(x));
            } catch (TierLagging e) {
                return Replies.error(Replies.EXCEEDED_TIME_LIMIT, "ExceededTimeLimit", e.getMessage(), retryLabels(x));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Replies.error(91, "ShutdownInProgress", "the Thermocline proxy is shutting down", retryLabels(x));
            }
        }, workers);
    }

    /**
     * Every tiered reply carries a fast-tier {@code operationTime} at or after the client's causal point
     * here: replies the proxy builds itself (guarded writes, tombstone deletes) have none of their own.
     * The driver sends it back as {@code afterClusterTime}, so another proxy replica can wait for it.
     */
    private RawBsonDocument withCausalPoint(Exchange x, RawBsonDocument reply) {
        BsonTimestamp point = causal.point(x.session(), x.request().connectionId());
        BsonTimestamp own = Replies.operationTime(reply);
        return point == null || own != null && own.compareTo(point) >= 0 ? reply : Replies.withOperationTime(reply, point);
    }

    private static List<String> retryLabels(Exchange x) {
        if (x.traits().inTransaction()) {
            return List.of("TransientTransactionError");
        }
        return x.traits().retryableWrite() ? List.of("RetryableWriteError") : List.of();
    }

    private RawBsonDocument serve(Exchange x, CommandClass cls) throws InterruptedException {
        if (cls instanceof CommandClass.Read read) {
            Predicate<RoutingTable> servesFast = t -> ReadRouter.route(read.filter(), t.policy(read.namespace()).orElse(null),
                    t.coverage(read.namespace()), read.collation()) instanceof ReadRoute.FastTier;
            ReadRoute route = ReadRouter.route(read.filter(), x.table().policy(read.namespace()).orElse(null),
                    x.table().coverage(read.namespace()), read.collation());
            return read(x, read.commandName(), read.namespace(), route, servesFast);
        }
        if (cls instanceof CommandClass.Write write) {
            return writes.serve(x, write, this);
        }
        if (cls instanceof CommandClass.Ddl ddl) {
            return ddl(x, ddl);
        }
        CommandClass.Rejected rejected = (CommandClass.Rejected) cls;
        metrics.decided("other", Served.REFUSED, rejected.reason());
        return Replies.error(Replies.COMMAND_NOT_SUPPORTED, "CommandNotSupported", rejected.message(), List.of());
    }

    // ---- reads -----------------------------------------------------------------------------

    private RawBsonDocument read(Exchange x, String command, String namespace, ReadRoute route,
                                 Predicate<RoutingTable> servesFast) throws InterruptedException {
        if (route instanceof ReadRoute.FastTier) {
            return fastRead(x, route, servesFast);
        }
        if (route instanceof ReadRoute.Refused refused) {
            metrics.decided("read", Served.REFUSED, refused.reason());
            return Replies.error(Replies.COMMAND_NOT_SUPPORTED, "CommandNotSupported", refused.message(), List.of());
        }
        if (route instanceof ReadRoute.PointReadFastFirst point && !zeroBatch(x.command())) {
            return pointRead(x, command, namespace, point);
        }
        metrics.decided("read", Served.ARCHIVE, route.reason());
        return archive(x, Replies.forTier(x.msg()));
    }

    /**
     * A read the coverage proves the fast tier can answer. The proof holds while no evictor can have
     * deleted under a bound this proxy has not seen: if the view of the state went stale, or a bound
     * seen since the decision no longer covers the read, by the time the answer is back, the archive
     * answers instead (a fast-tier cursor left open is swept as idle).
     */
    private RawBsonDocument fastRead(Exchange x, ReadRoute route, Predicate<RoutingTable> servesFast) throws InterruptedException {
        OpMsg msg = Replies.forTier(x.msg());
        RawBsonDocument reply = fast(x, msg);
        if (!follower.stillServes(x.decided(), servesFast)) {
            metrics.decided("read", Served.ARCHIVE, Reason.COVERAGE_CHANGED_DURING_READ);
            return archive(x, msg);
        }
        metrics.decided("read", Served.FAST, route.reason());
        cursors.opened(Replies.cursorId(reply), new TieredCursors.FastTier(x.decided(), servesFast));
        return reply;
    }

    /** A find with batchSize 0 leaves an open cursor and an empty batch: not an answer a miss can be read from. */
    private static boolean zeroBatch(BsonDocument command) {
        BsonValue batch = command.get("batchSize");
        return batch != null && batch.isNumber() && batch.asNumber().intValue() == 0;
    }

    private RawBsonDocument pointRead(Exchange x, String command, String namespace, ReadRoute.PointReadFastFirst point)
            throws InterruptedException {
        OpMsg msg = Replies.forTier(x.msg());
        RawBsonDocument fastReply = fast(x, msg);
        if (!Replies.empty(command, fastReply)) {
            metrics.decided("read", Served.FAST, point.reason());
            return fastReply;
        }
        Fence fence = fences.read(null, namespace, List.of(point.id())).get(point.id());
        if (fence != null && fence.kind() == Fence.Kind.USER_DELETE) {
            // deleted by a user after any archived version: the archive may still hold it until the feeder catches up
            metrics.decided("read", Served.FAST, point.reason());
            return fastReply;
        }
        metrics.decided("read", Served.ARCHIVE, point.reason());
        // absent from the fast tier after the read arrived and never fenced: the archive already holds every write to it
        RawBsonDocument archived = PointReadSkip.allowed(command, x.command(), fence != null)
                ? archive(x, msg, barrier.skipped()) : archive(x, msg);
        BsonDocument document = Replies.firstDocument(archived);
        CollectionPolicy policy = x.table().policy(namespace).orElse(null);
        if (document != null && policy != null && command.equals("find") && !x.command().containsKey("projection")) {
            promotion.promoteIfHot(policy, document);
        }
        return archived;
    }

    /** Runs on the fast tier and moves the client's causal point to the reply's operation time. */
    RawBsonDocument fast(Exchange x, OpMsg msg) {
        RawBsonDocument reply = x.call().call(Tier.FAST, msg).join();
        observed(x, Replies.operationTime(reply));
        return reply;
    }

    void observed(Exchange x, BsonTimestamp fastTierTime) {
        causal.observed(x.session(), x.request().connectionId(), fastTierTime);
    }

    /**
     * Runs on the archive once it holds what the read must see ({@link ReadBarrier}). The reply's
     * {@code operationTime} becomes the fast-tier time the archive was known to hold: the client's
     * driver sends it back as {@code afterClusterTime}, a causal point any proxy replica can wait for.
     */
    RawBsonDocument archive(Exchange x, OpMsg msg) throws InterruptedException {
        return archive(x, msg, awaitCausalPoint(x));
    }

    /** Runs on the archive; {@code through}: the fast-tier time through which the archive holds every write, or null. */
    private RawBsonDocument archive(Exchange x, OpMsg msg, BsonTimestamp through) {
        RawBsonDocument reply = x.call().call(Tier.ARCHIVE, msg).join();
        if (through == null) {
            return reply;
        }
        cursors.opened(Replies.cursorId(reply), new TieredCursors.Archive(through));
        return Replies.withOperationTime(reply, through);
    }

    BsonTimestamp awaitCausalPoint(Exchange x) throws InterruptedException {
        return barrier.await(x.msg().commandName(), causal.point(x.session(), x.request().connectionId()),
                Replies.afterClusterTime(x.command()));
    }

    // ---- change streams --------------------------------------------------------------------

    /** An application change stream on a tiered namespace: the fast tier's, without Thermocline's own writes. */
    private RawBsonDocument changeStream(Exchange x, ReadRoute route) throws InterruptedException {
        ledger.start();
        metrics.decided("change_stream", Served.FAST, route.reason());
        RawBsonDocument reply = fast(x, Replies.forTier(x.msg()));
        long id = Replies.cursorId(reply);
        if (id != 0) {
            changeStreams.add(id);
        }
        return withoutOwnWrites(reply, "firstBatch");
    }

    /**
     * Called by the dispatcher with every getMore reply (before it maps the cursor id): batches of an
     * application change stream lose the events of Thermocline's own transactions.
     */
    public CompletableFuture<RawBsonDocument> filterBatch(long proxyCursorId, RawBsonDocument reply) {
        TieredCursors.Basis basis = cursors.get(proxyCursorId);
        if (basis != null) {
            return CompletableFuture.completedFuture(checkedBatch(proxyCursorId, basis, reply));
        }
        if (!changeStreams.contains(proxyCursorId)) {
            return CompletableFuture.completedFuture(reply);
        }
        if (Replies.cursorId(reply) == 0) {
            changeStreams.remove(proxyCursorId);
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                return withoutOwnWrites(reply, "nextBatch");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return reply;
            }
        }, workers);
    }

    /**
     * A getMore batch of a tiered read: from the fast tier only while its coverage proof still holds
     * (otherwise the batch may miss documents evicted since the cursor opened: the client must re-run
     * the query, which is then routed with the current bounds); from the archive with the fast-tier
     * operationTime its first batch had.
     */
    private RawBsonDocument checkedBatch(long proxyCursorId, TieredCursors.Basis basis, RawBsonDocument reply) {
        if (Replies.cursorId(reply) == 0 || !Replies.isOk(reply)) {
            cursors.closed(proxyCursorId);
        }
        if (basis instanceof TieredCursors.FastTier fast && !follower.stillServes(fast.decided(), fast.servesFast())) {
            cursors.closed(proxyCursorId);
            metrics.decided("get_more", Served.REFUSED, Reason.COVERAGE_CHANGED_DURING_READ);
            return Replies.error(Replies.QUERY_PLAN_KILLED, "QueryPlanKilled", "this cursor read the fast tier under a"
                    + " coverage bound that no longer holds (the evictor may have removed documents it would return, or this"
                    + " proxy could not refresh the tiering state within the propagation delay); re-run the query: it is"
                    + " routed with the current bounds", List.of());
        }
        if (basis instanceof TieredCursors.Archive archived && Replies.isOk(reply)) {
            return Replies.withOperationTime(reply, archived.mirroredThrough());
        }
        return reply;
    }

    private RawBsonDocument withoutOwnWrites(RawBsonDocument reply, String batchField) throws InterruptedException {
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument() || !cursor.asDocument().isArray(batchField)) {
            return reply;
        }
        org.bson.BsonArray kept = new org.bson.BsonArray();
        boolean dropped = false;
        for (BsonValue value : cursor.asDocument().getArray(batchField)) {
            if (value.isDocument() && own(value.asDocument())) {
                dropped = true;
            } else {
                kept.add(value);
            }
        }
        if (!dropped) {
            return reply;
        }
        BsonDocument newCursor = Replies.mutable(cursor.asDocument());
        newCursor.put(batchField, kept);
        BsonDocument out = Replies.mutable(reply);
        out.put("cursor", newCursor);
        return OpMsg.raw(out);
    }

    private boolean own(BsonDocument event) throws InterruptedException {
        BsonValue lsid = event.get("lsid");
        BsonValue txn = event.get("txnNumber");
        BsonValue time = event.get("clusterTime");
        return lsid != null && lsid.isDocument() && txn != null && txn.isNumber()
                && time != null && time.isTimestamp() && ledger.isOwn(txn.asNumber().longValue(), time.asTimestamp());
    }

    // ---- DDL, explain ----------------------------------------------------------------------

    /**
     * DDL applies to the archive first (the cluster the application believes in), then to the fast tier.
     * A drop first waits until the feeder mirrored every fast-tier write acknowledged before it: the
     * feeder would otherwise mirror them after the archive's drop and bring the dropped documents back.
     */
    private RawBsonDocument ddl(Exchange x, CommandClass.Ddl ddl) throws InterruptedException {
        metrics.decided("ddl", Served.BOTH, Reason.DDL_ON_TIERED_NAMESPACE);
        if (ddl.commandName().equalsIgnoreCase("drop") || ddl.commandName().equalsIgnoreCase("dropDatabase")) {
            writes.mirrorEverythingWritten();
        }
        RawBsonDocument archived = x.call().call(Tier.ARCHIVE, x.msg()).join();
        if (!Replies.isOk(archived)) {
            return archived;
        }
        RawBsonDocument fastReply = fast(x, x.msg());
        if (!Replies.isOk(fastReply) && !ignorableOnFastTier(fastReply)) {
            LOG.warn("event=ddl_fast_tier_failed command={} namespaces={} code={}", ddl.commandName(), ddl.namespaces(),
                    fastReply.get("code"));
            return fastReply;
        }
        // the fast tier's time: the client's causal point stays in one clock
        BsonTimestamp fastTime = Replies.operationTime(fastReply);
        return fastTime == null ? archived : Replies.withOperationTime(archived, fastTime);
    }

    /** The fast tier may lack a collection or index the archive has (nothing warmed yet), or have it already. */
    private static boolean ignorableOnFastTier(BsonDocument reply) {
        BsonValue code = reply.get("code");
        int c = code != null && code.isNumber() ? code.asNumber().intValue() : -1;
        return c == 26 || c == 27 || c == 48;
    }

    private RawBsonDocument explain(Exchange x, CommandClass cls) throws InterruptedException {
        RoutingExplanation explanation = RoutingExplanation.of(cls, x.table());
        boolean onFast = switch (explanation.served()) {
            case FAST_TIER, FAST_TIER_THEN_ARCHIVE, PROMOTE_THEN_FAST_TIER, RESOLVE_THEN_FAST_TIER -> true;
            default -> false;
        };
        metrics.decided("explain", onFast ? Served.FAST : Served.ARCHIVE, explanation.reason());
        OpMsg msg = Replies.forTier(x.msg());
        RawBsonDocument reply = onFast ? fast(x, msg) : archive(x, msg);
        BsonDocument out = new BsonDocument();
        if (Replies.isOk(reply)) {
            reply.forEach(out::append);
        } else {
            // a tier without explain (an embedded server) still gets the routing answer, which is the proxy's own
            out.append("ok", new org.bson.BsonDouble(1)).append("tierExplainError", reply.get("errmsg", new org.bson.BsonString("")));
        }
        out.append("thermocline", explanation.toBsonDocument());
        return OpMsg.raw(out);
    }

    // ---- transactions ----------------------------------------------------------------------

    private Optional<CompletableFuture<RawBsonDocument>> transaction(Exchange x, CommandClass cls) {
        if (x.session().isEmpty()) {
            return Optional.empty();
        }
        SessionKey key = x.session().get();
        PinnedTransaction pinned = transactions.get(key);
        if (pinned != null && (x.traits().txnNumber() == null || pinned.txnNumber() != x.traits().txnNumber())) {
            transactions.remove(key);
            pinned = null;
        }
        if (x.traits().endsTransaction()) {
            transactions.remove(key);
            if (pinned == null || pinned.tier() == TransactionTier.ARCHIVE) {
                return Optional.empty();
            }
            return Optional.of(run(x, () -> fast(x, x.msg())));
        }
        if (cls instanceof CommandClass.CursorOwned || cls instanceof CommandClass.Session) {
            return Optional.empty();
        }
        TransactionRoute route = TransactionRouter.route(cls, x.table(), pinned == null ? null : pinned.tier());
        if (route instanceof TransactionRoute.Refused refused) {
            metrics.decided("transaction", Served.REFUSED, refused.reason());
            return Optional.of(CompletableFuture.completedFuture(Replies.error(Replies.OPERATION_NOT_SUPPORTED_IN_TRANSACTION,
                    "OperationNotSupportedInTransaction", refused.message(), List.of())));
        }
        TransactionTier tier = route instanceof TransactionRoute.Run r ? r.tier() : TransactionTier.FAST;
        transactions.put(key, new PinnedTransaction(x.traits().txnNumber(), tier));
        metrics.decided("transaction", tier == TransactionTier.FAST ? Served.FAST : Served.ARCHIVE, route.reason());
        if (tier == TransactionTier.ARCHIVE) {
            return Optional.empty();
        }
        if (cls instanceof CommandClass.Write w && w.kind() == CommandClass.WriteKind.DELETE
                || cls instanceof CommandClass.Write fam && fam.kind() == CommandClass.WriteKind.FIND_AND_MODIFY
                && fam.statements().get(0).getBoolean("remove", org.bson.BsonBoolean.FALSE).getValue()) {
            return Optional.of(CompletableFuture.completedFuture(Replies.error(Replies.OPERATION_NOT_SUPPORTED_IN_TRANSACTION,
                    "OperationNotSupportedInTransaction", "deleting documents of a tiered collection inside a transaction is not"
                            + " supported yet: a user delete must also leave a tombstone for the archive; delete outside the"
                            + " transaction", List.of())));
        }
        return Optional.of(run(x, () -> {
            if (route instanceof TransactionRoute.PromoteThenRun promote && cls instanceof CommandClass.Write w) {
                promotion.ensureInFast(w.namespace(), promote.ids());
            } else if (route instanceof TransactionRoute.PromoteThenRun promote && cls instanceof CommandClass.Read r) {
                promotion.ensureInFast(r.namespace(), promote.ids());
            }
            return fast(x, Replies.forTier(x.msg()));
        }));
    }

    @Override
    public void close() {
        ledger.close();
        workers.shutdownNow();
        try {
            resources.close();
        } catch (Exception e) {
            LOG.warn("event=tiered_close_failed error={}", e.toString());
        }
    }
}
