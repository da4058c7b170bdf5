package io.thermocline.proxy.tiered;

import io.thermocline.proxy.causal.ArchivePresent;
import io.thermocline.proxy.causal.CausalPoints;
import io.thermocline.proxy.causal.CausalWaitTimeout;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.ErrorMapping;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.mode.ModeGate;
import io.thermocline.proxy.mode.ModeRoute;
import io.thermocline.proxy.mode.Modes;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.CommandClassifier;
import io.thermocline.proxy.routing.PipelineRouter;
import io.thermocline.proxy.routing.ReadRoute;
import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.tiered.admin.DbaCommands;
import io.thermocline.proxy.tiered.changestreams.ChangeStreamFilter;
import io.thermocline.proxy.tiered.changestreams.OwnTransactionLedger;
import io.thermocline.proxy.tiered.changestreams.UpdateLookups;
import io.thermocline.proxy.tiered.ddl.DdlFanOut;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.proxy.tiered.exchange.TierWork;
import io.thermocline.proxy.tiered.exchange.TieredCursors;
import io.thermocline.proxy.tiered.exchange.TieringFollower;
import io.thermocline.proxy.tiered.explain.TieredExplain;
import io.thermocline.proxy.tiered.reads.TieredReads;
import io.thermocline.proxy.tiered.transactions.TransactionRouting;
import io.thermocline.proxy.tiered.writes.Promotion;
import io.thermocline.proxy.tiered.writes.TieredWrites;
import io.thermocline.proxy.tiered.writes.WriteRequest;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tiered proxy's entry: the dispatcher offers every command; this class claims the ones that
 * touch tiered namespaces and hands each to the handler of its kind (reads, change streams, writes,
 * DDL, explain, transactions), leaving everything else to the pass-through path. Claimed commands run
 * on a worker pool, because they may wait (causal point, sync barrier, promotion) and the network
 * threads must not. It reaches each tier through the gateway the server built over its own connections, and
 * answers the client through the server's replies; both are given at construction ({@link TieredProxy.Layer}).
 */
public final class TieredRouting implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TieredRouting.class);

    private final TieringFollower follower;
    private final ReadBarrier barrier;
    private final CausalTiers tiers;
    private final ArchivePresent archivePresent;
    private final TieredReads reads;
    private final TieredCursors cursors;
    private final Promotion promotion;
    private final ChangeStreamFilter changeStreams;
    private final TieredWrites writes;
    private final DdlFanOut ddl;
    private final TieredExplain explain;
    private final TransactionRouting transactions;
    private final ExecutorService workers;
    private final AutoCloseable resources;
    private final OwnTransactionLedger ledger;
    private final MetadataStore store;
    private final Modes modes;
    private final ModePhases phases;
    private final AtomicBoolean metadataStarted = new AtomicBoolean();
    private volatile boolean metadataReady;
    private final RoutingMetrics metrics;
    private final ClientReplies replies;
    private final ErrorMapping errors;

    TieredRouting(
            TieringFollower follower,
            CausalPoints causal,
            ReadBarrier barrier,
            ArchivePresent archivePresent,
            Promotion promotion,
            TieredWrites writes,
            Fences fences,
            OwnTransactionLedger ledger,
            MetadataStore store,
            Modes modes,
            UpdateLookups lookups,
            ExecutorService workers,
            AutoCloseable resources,
            TierGateways gateways,
            ClientReplies replies,
            ErrorMapping errors,
            RoutingMetrics metrics) {
        this.metrics = metrics;
        TieredCursors cursors = new TieredCursors(100_000);
        this.cursors = cursors;
        this.follower = follower;
        this.barrier = barrier;
        this.tiers = new CausalTiers(causal, barrier, archivePresent, cursors, gateways);
        this.archivePresent = archivePresent;
        this.reads = new TieredReads(follower, tiers, cursors, promotion, fences, metrics);
        this.promotion = promotion;
        this.changeStreams = new ChangeStreamFilter(ledger, tiers, workers, metrics, lookups);
        this.writes = writes;
        this.ddl = new DdlFanOut(tiers, writes::dropping, metrics);
        this.explain = new TieredExplain(tiers, metrics);
        this.transactions = new TransactionRouting(
                (x, namespace, cls, cold) -> writes.inTransaction(writeRequest(x), namespace, cls, cold),
                tiers,
                metrics);
        this.ledger = ledger;
        this.store = store;
        this.modes = modes;
        this.phases = new ModePhases(modes, tiers, cursors, follower);
        this.workers = workers;
        this.resources = resources;
        this.replies = java.util.Objects.requireNonNull(replies, "replies");
        this.errors = java.util.Objects.requireNonNull(errors, "errors");
    }

    /** How promotions passed the sync barrier so far. */
    public CopyUp.BarrierCounts copyUpBarrierCounts() {
        return promotion.barrierCounts();
    }

    /** How many linearizable reads waited for this proxy's stream of fast-tier writes to reach the present. */
    public long readsThatWaitedForWriteStream() {
        return barrier.streamWaits();
    }

    /** How many speculative archive answers were dropped with a cursor the archive then reported killed. */
    public long speculativeCursorsKilled() {
        return tiers.speculativeCursorsKilled();
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
     * Serves a command when it involves tiered data, to its reply to the client; empty leaves it to the pass-through
     * path. Runs under the mode {@code ticket} the dispatcher holds until the reply is sent; a shadowed read left to the
     * pass-through path hands the archive's reply to the ticket for comparison. The classification is pure and cheap,
     * so it runs on the network thread; the work does not.
     */
    public Optional<CompletableFuture<Void>> serve(Request request, ModeGate.Ticket ticket) {
        return route(request, ticket)
                .map(reply -> reply.thenCompose(out -> replies.finish(request, out, OpMsg.isOk(out), 0))
                        .exceptionallyCompose(e -> errors.unavailable(request, e)));
    }

    /**
     * {@code listDatabases} with the fast tier's disk added to the databases holding tiered collections; empty
     * when only names are asked (or nothing is tiered): the archive's answer is the whole answer then.
     */
    public Optional<CompletableFuture<RawBsonDocument>> listDatabases(Request request) {
        return DbaCommands.listDatabases(
                tiers.gateways(), request, follower.decide().table());
    }

    /** This proxy's mode machinery (gate, shadow comparator, controller). */
    public Modes modes() {
        return modes;
    }

    /** The reply a claimed command gets, before it is sent; empty: not claimed. */
    private Optional<CompletableFuture<RawBsonDocument>> route(Request request, ModeGate.Ticket ticket) {
        TieringFollower.Decided decided = follower.decide();
        RoutingTable table = decided.table();
        if (table.policies().isEmpty()) {
            return Optional.empty();
        }
        OpMsg msg = request.msg();
        BsonDocument command = msg.command();
        CommandTraits traits = request.traits();
        CommandClass cls = CommandClassifier.classify(command, msg.database(), table);
        Exchange x = new Exchange(request, command, traits, traits.session(), decided);
        ensureMetadata();
        Optional<CompletableFuture<RawBsonDocument>> dba = DbaCommands.serve(tiers.gateways(), request, cls, table);
        if (dba.isPresent()) {
            return dba;
        }
        switch (ModeRoute.of(
                ticket.phase(), ticket.stale(), ticket.fleetBehind(), cls, traits.inTransaction(), request.name())) {
            case REFUSE -> {
                return Optional.of(CompletableFuture.completedFuture(phases.refusal(x, ticket)));
            }
            case ARCHIVE -> {
                phases.shadowed(x, cls, ticket);
                return Optional.empty();
            }
            case EXPLAIN -> {
                return Optional.of(run(x, () -> phases.modeExplain(x, cls, ticket)));
            }
            case TIERED -> {
                // the tiered path below, as before modes existed
            }
        }
        if (traits.inTransaction() || traits.endsTransaction()) {
            return transactions.route(x, cls, this::run);
        }
        if (cls instanceof CommandClass.Read read) {
            return Optional.of(run(x, () -> reads.read(x, read)));
        }
        if (cls instanceof CommandClass.Write write) {
            return Optional.of(run(x, () -> writes.serve(writeRequest(x), write)));
        }
        if (cls instanceof CommandClass.Ddl statement) {
            return Optional.of(run(x, () -> ddl.apply(x, statement)));
        }
        if (cls instanceof CommandClass.Rejected rejected) {
            return Optional.of(run(x, () -> refused(rejected)));
        }
        if (cls instanceof CommandClass.Aggregate aggregate) {
            ReadRoute route =
                    PipelineRouter.route(aggregate.database(), aggregate.collection(), aggregate.pipeline(), table);
            if (route instanceof ReadRoute.Archive a && a.reason() == Reason.UNTIERED_NAMESPACE) {
                return Optional.empty();
            }
            if (route.reason() == Reason.CHANGE_STREAM_ON_FAST_TIER) {
                return Optional.of(run(x, () -> changeStreams.open(x, route)));
            }
            return Optional.of(run(x, () -> reads.aggregate(x, aggregate, route)));
        }
        if (cls instanceof CommandClass.Explain explained && tiered(explained.explained())) {
            return Optional.of(run(x, () -> explain.explain(x, cls)));
        }
        return Optional.empty();
    }

    /**
     * Whether a getMore round on cursor {@code proxyCursorId} of {@code namespace} must be refused, under the mode
     * {@code ticket} the dispatcher holds until the round's reply is sent (so a hold's acknowledgement waits for rounds in
     * flight, as for every tiered command). A cursor of a tiered read stops while the fleet is held for a restore: it would
     * go on reading a fast tier whose future the restore takes away, or an archive being replaced. The refusal is the
     * other tiered commands' (ExceededTimeLimit), but drivers do not retry a getMore: the cursor fails, and it is ended
     * (its next getMore finds no cursor), since a later round would mix the restored state into what it returned before.
     * For the same reason a cursor opened before the hold and left idle through it ({@code openedBeforeRestore}) is
     * ended at its first getMore after the restore, with QueryPlanKilled.
     */
    public Optional<RawBsonDocument> refusedCursorRound(
            long proxyCursorId,
            String namespace,
            boolean inTransaction,
            boolean openedBeforeRestore,
            ModeGate.Ticket ticket) {
        return phases.refusedCursorRound(proxyCursorId, namespace, inTransaction, openedBeforeRestore, ticket);
    }

    /**
     * Called by the dispatcher with every getMore reply (before it maps the cursor id): batches of a
     * tiered read are checked against the proof their cursor was opened under, and batches of an
     * application change stream lose the events of Thermocline's own transactions.
     */
    public CompletableFuture<RawBsonDocument> filterBatch(long proxyCursorId, RawBsonDocument reply) {
        Optional<RawBsonDocument> checked = reads.checkedBatch(proxyCursorId, reply);
        return checked.isPresent()
                ? CompletableFuture.completedFuture(checked.get())
                : changeStreams.nextBatch(proxyCursorId, reply);
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
        return cls instanceof CommandClass.Read
                || cls instanceof CommandClass.Write
                || cls instanceof CommandClass.Ddl
                || cls instanceof CommandClass.Aggregate
                || cls instanceof CommandClass.Rejected;
    }

    private RawBsonDocument refused(CommandClass.Rejected rejected) {
        metrics.decided("other", Served.REFUSED, rejected.reason());
        return MongoError.COMMAND_NOT_SUPPORTED.reply(rejected.message(), List.of());
    }

    private CompletableFuture<RawBsonDocument> run(Exchange x, TierWork work) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return tiers.withCausalPoint(x, work.run());
                    } catch (CausalWaitTimeout e) {
                        return MongoError.EXCEEDED_TIME_LIMIT.reply(e.getMessage(), Replies.retryLabels(x));
                    } catch (TierLagging e) {
                        return MongoError.EXCEEDED_TIME_LIMIT.reply(e.getMessage(), Replies.retryLabels(x));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return MongoError.SHUTDOWN_IN_PROGRESS.reply(
                                "the Thermocline proxy is shutting down", Replies.retryLabels(x));
                    }
                },
                workers);
    }

    /** Runs on the fast tier and moves the client's causal point (the writes' way to the fast tier). */
    RawBsonDocument fast(Exchange x, OpMsg msg) {
        return tiers.fast(x, msg);
    }

    void observed(Exchange x, BsonTimestamp fastTierTime) {
        tiers.observed(x, fastTierTime);
    }

    /** The write path's view of this command: the fast tier on the client's connection, and its causal point. */
    private WriteRequest writeRequest(Exchange x) {
        return new WriteRequest(x.command(), x.traits(), x.session(), x.table(), new WriteRequest.FastTier() {
            @Override
            public RawBsonDocument forwardAsSent() {
                return fast(x, x.msg());
            }

            @Override
            public RawBsonDocument send(BsonDocument body) {
                return fast(x, Replies.rewritten(body));
            }

            @Override
            public void observed(BsonTimestamp operationTime) {
                TieredRouting.this.observed(x, operationTime);
            }
        });
    }

    @Override
    public void close() {
        modes.close();
        ledger.close();
        workers.shutdownNow();
        try {
            resources.close();
        } catch (Exception e) {
            LOG.warn("event=tiered_close_failed error={}", e.toString());
        }
    }
}
