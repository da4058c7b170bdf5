package io.thermocline.tiering.feeder;

import com.mongodb.MongoException;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.Worker;
import io.thermocline.tiering.worker.WorkerOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mirrors every user write on the fast tier's tiered namespaces to the archive. One change stream
 * (deployment scope, {@code $match} on the tiered namespaces and Thermocline's provenance, fence
 * and probe collections, {@code fullDocument: updateLookup}); per batch: plan
 * ({@link BatchPlanner}), ordered bulk writes with majority write concern per namespace, then —
 * only after the archive acknowledged — a compare-and-set of the checkpoint (resume token,
 * mirrored-through). A crash anywhere replays at most the last batch: every write is an
 * idempotent full-image upsert or delete by {@code _id}, applied in the original order.
 *
 * <p>Only one feeder mirrors at a time: it holds a lease in its checkpoint document and stops
 * when a conditional write finds that another instance took over.
 */
public final class Feeder extends Worker<Feeder> {

    private static final Logger LOG = LoggerFactory.getLogger(Feeder.class);

    /** Tuning that is not part of the user-facing configuration. */
    public static final class Options extends WorkerOptions<Options> {
        private Duration probeInterval = Duration.ofSeconds(1);
        private Duration leaseDuration = Duration.ofSeconds(30);
        private Duration deadLetterRetryInterval = Duration.ofMinutes(1);

        private Options() {
            super("feeder", Duration.ofSeconds(1));
        }

        public static Options defaults() {
            return new Options();
        }

        /** How often an idle feeder writes a probe (its lag is measured against the last one). */
        public Duration probeInterval() {
            return probeInterval;
        }

        public Duration leaseDuration() {
            return leaseDuration;
        }

        /** How often dead letters are retried (the cause may have been fixed in the archive). */
        public Duration deadLetterRetryInterval() {
            return deadLetterRetryInterval;
        }

        public Options withProbeInterval(Duration interval) {
            return copyWith(o -> o.probeInterval = interval);
        }

        public Options withLeaseDuration(Duration lease) {
            return copyWith(o -> o.leaseDuration = lease);
        }

        public Options withDeadLetterRetryInterval(Duration interval) {
            return copyWith(o -> o.deadLetterRetryInterval = interval);
        }
    }

    private final FeederConfig config;
    private final Options options;
    private final MirrorBarrier barrier;
    private final BatchPlanner planner;
    private final FeederMetrics metrics;
    private final ArchiveWriter writer;
    private final EvictedVersions evictedVersions;
    /** Decides every mirrored-through this feeder publishes (the archive holds every write at or before it). */
    private final UnresolvedWrites unresolved = new UnresolvedWrites();

    private final LeasedCheckpoint checkpoint;
    private final TieredChangeStream stream;
    private final LagProbe probe;
    private final HealthReport health;
    private final DeadLetterRetry deadLetters;
    private final CatchUp catchUp;
    /** The last event whose batch the archive acknowledged (dead letters aside), whatever mirrored-through says. */
    private volatile BsonTimestamp applied;

    /** Starts a feeder with its own clients for the configured tiers. */
    public static Feeder start(ThermoclineConfig config, Options options) {
        return startOwning(
                config,
                "feeder",
                (fast, archive) -> new Feeder(fast, archive, config.collections(), config.feeder(), options));
    }

    /** A feeder over clients the caller owns (the embedded default, tests). Call {@link #start()}. */
    public Feeder(
            MongoClient fast,
            MongoClient archive,
            List<CollectionPolicy> policies,
            FeederConfig config,
            Options options) {
        super("feeder", fast, archive, policies, options);
        this.config = config;
        this.options = options;
        this.barrier = new MirrorBarrier(fast, store, marker);
        Set<Namespace> namespaces = new LinkedHashSet<>();
        policies.forEach(p -> namespaces.add(Namespace.of(p)));
        this.planner = new BatchPlanner(namespaces, config.coalesce());
        this.metrics = FeederMetrics.in(options.registry());
        DeadLetters letters = new DeadLetters(store);
        this.writer = new ArchiveWriter(archive, letters, metrics);
        this.evictedVersions = new EvictedVersions(new Fences(store), namespaces);
        this.checkpoint = new LeasedCheckpoint(store, options.instanceId(), options.leaseDuration(), options.faults());
        this.stream = new TieredChangeStream(
                fast,
                this.policies,
                config.batchSize(),
                config.maxBatchWait(),
                options.probeInterval(),
                options.instanceId());
        this.probe = new LagProbe(barrier, metrics, options.probeInterval());
        this.health = new HealthReport(store, metrics, options.instanceId());
        this.deadLetters = new DeadLetterRetry(
                fast, unresolved, letters, writer, checkpoint, health, metrics, options.deadLetterRetryInterval());
        this.catchUp = new CatchUp(
                new Resync(fast, archive, store, writer),
                this.policies,
                checkpoint,
                stream,
                probe,
                barrier,
                unresolved,
                deadLetters,
                health,
                metrics,
                options);
    }

    /**
     * Waits until this feeder holds the lease and has checkpointed a position in the change stream
     * (after a first start, once its resync of earlier writes is done): archive reads then stop waiting.
     */
    public boolean awaitStreaming(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && running()) {
            FeederCheckpoint current = checkpoint.current();
            if (current != null && current.resumeToken() != null && stream.isOpen()) {
                return true;
            }
            Thread.sleep(10);
        }
        return false;
    }

    /**
     * Whether every fast-tier write at or before {@code time} reached the archive, or was refused by it for good and
     * kept as a dead letter: what a stop needs to know. Mirrored-through answers it too, except while a dead letter
     * is open, when it does not move at all (docs/consistency.md).
     */
    public boolean appliedExceptDeadLetters(BsonTimestamp time) {
        FeederCheckpoint current = checkpoint.current();
        if (current != null && current.covers(time)) {
            return true;
        }
        BsonTimestamp through = applied;
        return deadLetters.open() && through != null && through.compareTo(time) >= 0;
    }

    /** The checkpoint as this feeder last wrote it (null before its first). */
    public FeederCheckpoint lastCheckpoint() {
        return checkpoint.current();
    }

    @Override
    protected Duration round() throws InterruptedException {
        try {
            if (!stream.isOpen() && !open()) {
                return options.leaseDuration().dividedBy(4);
            }
            if (deadLetters.retryDue()) {
                checkpoint.settle();
                deadLetters.retry();
            }
            List<ChangeEvent> events = stream.nextBatch();
            if (events.isEmpty()) {
                probe.idle();
                return Duration.ZERO;
            }
            mirror(evictedVersions.fillIn(events));
            if (stream.pastLargeEvent()) {
                // past the large event: back to the server's own lookups, from the checkpoint just written
                checkpoint.settle();
                stream.leaveLean();
            }
            return Duration.ZERO;
        } catch (RuntimeException | InterruptedException e) {
            // events taken from the stream but not checkpointed must be read again: reopen from the checkpoint
            stream.close();
            checkpoint.settleQuietly();
            FeederCheckpoint last = checkpoint.current();
            if (e instanceof MongoException error && historyLost(error) && last != null) {
                catchUp.afterHistoryLost(error);
                return Duration.ZERO;
            }
            if (e instanceof MongoException error && last != null && stream.goLean(error, last.mirroredThrough())) {
                return Duration.ZERO;
            }
            ArchiveTrouble.of(e).ifPresent(trouble -> health.archiveTakesNothing(trouble, stream.pending(), last));
            throw e;
        }
    }

    /**
     * The fast tier's oplog no longer holds the resume point: ChangeStreamHistoryLost (286, MongoDB
     * 4.2+), CappedPositionLost (136), or 4.0's "resume token was not found" (280). Retrying cannot help.
     */
    public static boolean historyLost(MongoException error) {
        return error.getCode() == 286
                || error.getCode() == 136
                || (error.getCode() == 280
                        && String.valueOf(error.getMessage()).contains("resume token was not found"));
    }

    private boolean open() throws InterruptedException {
        store.ensureCollections();
        if (!checkpoint.take()) {
            return false;
        }
        FeederCheckpoint taken = checkpoint.current();
        stream.restoreOwnTransactions(taken.openOwnTransaction());
        health.reload();
        deadLetters.opened();
        LOG.debug(
                "event=feeder_open instance={} openOwnTransaction={}",
                options.instanceId(),
                taken.openOwnTransaction());
        if (taken.resumeToken() != null || !taken.mirroredThrough().equals(FeederCheckpoint.NOTHING_MIRRORED)) {
            // what the previous incarnation (or this one, before a retry) held back is not known: hold until the stream
            // passes now
            unresolved.hold(taken.mirroredThrough(), barrier.probe());
        }
        if (taken.resumeToken() != null) {
            stream.open(taken.resumeToken(), null, taken.openOwnTransaction());
            LOG.info(
                    "event=feeder_resumed instance={} mirroredThrough={}",
                    options.instanceId(),
                    describe(taken.mirroredThrough()));
        } else if (taken.mirroredThrough().equals(FeederCheckpoint.NOTHING_MIRRORED)) {
            catchUp.firstStart();
        } else {
            BsonTimestamp start = justAfter(taken.mirroredThrough());
            stream.open(null, start, taken.openOwnTransaction());
            LOG.info(
                    "event=feeder_restarted_before_first_batch instance={} at={}",
                    options.instanceId(),
                    describe(start));
        }
        return true;
    }

    private void mirror(List<ChangeEvent> events) throws InterruptedException {
        MirrorPlan plan = planner.plan(events, stream.ownTransactions());
        checkpoint.requireLease("archive write");
        if (plan.missingImageAt() != null) {
            // the probe is written after the lookup, so the delete that emptied it comes before the probe in the stream
            BsonTimestamp heldUntil = barrier.probe();
            unresolved.hold(BatchPlanner.justBefore(plan.missingImageAt()), heldUntil);
            metrics.events.labelValues("missing_image").inc();
            LOG.debug(
                    "event=feeder_missing_image at={} heldUntil={}",
                    describe(plan.missingImageAt()),
                    describe(heldUntil));
        }
        boolean deadLettersChanged = false;
        boolean wrote = false;
        long archiveStart = System.nanoTime();
        for (Map.Entry<Namespace, List<MirrorAction>> entry : plan.actions().entrySet()) {
            if (entry.getValue().isEmpty()) {
                continue;
            }
            wrote = true;
            ArchiveWriter.Outcome outcome =
                    writer.write(entry.getKey(), entry.getValue(), checkpoint::archiveWriteTimeoutMillis);
            deadLettersChanged |= deadLetters.changedBy(entry.getKey(), outcome);
        }
        if (deadLettersChanged) {
            deadLetters.recount();
        }
        long archived = System.nanoTime();
        if (wrote) {
            metrics.batchPhases.labelValues("queued").observe((archiveStart - stream.batchArrivedNanos()) / 1e9);
            metrics.batchPhases.labelValues("archive").observe((archived - archiveStart) / 1e9);
            health.archiveTookABatch();
            // a batch of own events, probes and fence expiries only never waits for the archive
            options.faults().reached(FaultPoint.FEEDER_ARCHIVE_WRITTEN);
        }

        BsonTimestamp last = events.get(events.size() - 1).clusterTime();
        applied = last;
        probe.received(last);
        int pending = stream.pending();
        double lag = pending > 0 && last != null
                ? Math.max(0, Instant.now().getEpochSecond() - (last.getTime() & 0xFFFFFFFFL))
                : 0;
        // the previous checkpoint was written while this batch went to the archive; only now wait for it
        checkpoint.settle();
        FeederCheckpoint base = checkpoint.current();
        BsonTimestamp through = unresolved.publishable(base.mirroredThrough(), plan.mirroredThrough(), last);
        checkpoint.writeBehind(
                base,
                plan.resumeToken(),
                through,
                plan.openOwnTransaction(),
                base.mirroredEvents() + plan.counts().mirrored(),
                lag,
                pending,
                wrote
                        ? saved -> metrics.batchPhases.labelValues("checkpoint").observe((saved - archived) / 1e9)
                        : saved -> {});

        metrics.batches.inc();
        metrics.events.labelValues("mirrored").inc(plan.counts().mirrored());
        metrics.events.labelValues("coalesced").inc(plan.counts().coalesced());
        metrics.events.labelValues("own").inc(plan.counts().own());
        metrics.events.labelValues("ignored").inc(plan.counts().ignored());
        metrics.lagSeconds.set(lag);
        metrics.pendingEvents.set(pending);
        metrics.mirroredThroughSeconds.set(through.getTime() & 0xFFFFFFFFL);
        if (plan.actionCount() > 0) {
            LOG.debug(
                    "event=feeder_batch events={} writes={} coalesced={} own={} mirroredThrough={}",
                    plan.counts().events(),
                    plan.actionCount(),
                    plan.counts().coalesced(),
                    plan.counts().own(),
                    describe(through));
        }
    }

    /** The least cluster time strictly after {@code time}. */
    static BsonTimestamp justAfter(BsonTimestamp time) {
        if (time.getInc() == Integer.MAX_VALUE) {
            return new BsonTimestamp(time.getTime() + 1, 0);
        }
        return new BsonTimestamp(time.getTime(), time.getInc() + 1);
    }

    static String describe(BsonTimestamp time) {
        return time == null ? "none" : (time.getTime() & 0xFFFFFFFFL) + "." + time.getInc();
    }

    /** After the loop stopped: the next feeder resumes from the last checkpoint. */
    @Override
    protected void release() {
        stream.close();
        writer.close();
        checkpoint.close();
    }
}
