package io.thermocline.tiering.feeder;

import com.mongodb.MongoException;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.reactivestreams.client.ChangeStreamPublisher;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.FeederHealth;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.metadata.TransactionId;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnTransactions;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import io.thermocline.tiering.worker.Worker;
import io.thermocline.tiering.worker.WorkerOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.conversions.Bson;
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
    private final DeadLetters deadLetters;
    private final ArchiveWriter writer;
    private final EvictedVersions evictedVersions;
    /** Decides every mirrored-through this feeder publishes (the archive holds every write at or before it). */
    private final UnresolvedWrites unresolved = new UnresolvedWrites();

    private volatile EventQueue stream;
    private OwnTransactions own;
    private volatile FeederCheckpoint checkpoint;
    private volatile long leaseValidUntilNanos;
    /** The checkpoint being written while the next batch goes to the archive (at most one). */
    private Future<FeederCheckpoint> inFlight;

    private final ExecutorService checkpointer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "thermocline-feeder-checkpoint");
        t.setDaemon(true);
        return t;
    });
    private long lastProbeNanos;
    private BsonTimestamp outstandingProbe;
    private long deadLetterCount;
    /** Set after a change event over 16 MB failed the stream: stream without large fields until past it. */
    private BsonTimestamp leanThrough;

    private boolean streamIsLean;
    private BsonTimestamp lastReceived;
    private long lastDeadLetterRetryNanos;
    private FeederHealth health = FeederHealth.HEALTHY;
    /** Why the archive took no batch since {@link #troubleSince} (null while it takes them). */
    private ArchiveTrouble trouble;

    private long troubleSince;

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
        this.deadLetters = new DeadLetters(store);
        this.writer = new ArchiveWriter(archive, deadLetters, metrics);
        this.evictedVersions = new EvictedVersions(new Fences(store), namespaces);
    }

    /**
     * Waits until this feeder holds the lease and has checkpointed a position in the change stream
     * (after a first start, once its resync of earlier writes is done): archive reads then stop waiting.
     */
    public boolean awaitStreaming(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && running()) {
            FeederCheckpoint current = checkpoint;
            if (current != null && current.resumeToken() != null && stream != null) {
                return true;
            }
            Thread.sleep(10);
        }
        return false;
    }

    /** The checkpoint as this feeder last wrote it (null before its first). */
    public FeederCheckpoint lastCheckpoint() {
        return checkpoint;
    }

    @Override
    protected Duration round() throws InterruptedException {
        try {
            if (stream == null && !open()) {
                return options.leaseDuration().dividedBy(4);
            }
            if (deadLetterCount > 0
                    && System.nanoTime() - lastDeadLetterRetryNanos
                            >= options.deadLetterRetryInterval().toNanos()) {
                settle();
                retryDeadLetters();
            }
            List<ChangeEvent> events =
                    stream.nextBatch(config.batchSize(), config.maxBatchWait(), options.probeInterval());
            if (events.isEmpty()) {
                idle();
                return Duration.ZERO;
            }
            lastReceived = events.get(events.size() - 1).clusterTime();
            mirror(evictedVersions.fillIn(streamIsLean ? LargeEvents.lookUp(fast, events) : events));
            if (streamIsLean && lastReceived != null && lastReceived.compareTo(leanThrough) > 0) {
                // past the large event: back to the server's own lookups, from the checkpoint just written
                settle();
                leanThrough = null;
                closeStream();
                LOG.info("event=feeder_large_event_passed instance={}", options.instanceId());
            }
            return Duration.ZERO;
        } catch (RuntimeException | InterruptedException e) {
            // events taken from the stream but not checkpointed must be read again: reopen from the checkpoint
            closeStream();
            settleQuietly();
            if (e instanceof MongoException error && historyLost(error) && checkpoint != null) {
                resync(error);
                return Duration.ZERO;
            }
            if (e instanceof MongoException error
                    && LargeEvents.tooLarge(error)
                    && checkpoint != null
                    && !streamIsLean) {
                BsonTimestamp received = lastReceived == null ? checkpoint.mirroredThrough() : lastReceived;
                leanThrough = MetadataStore.max(received, checkpoint.mirroredThrough());
                LOG.warn(
                        "event=feeder_large_event instance={} after={} error=\"{}\" action=stream_without_large_fields",
                        options.instanceId(),
                        describe(leanThrough),
                        error.getMessage());
                return Duration.ZERO;
            }
            ArchiveTrouble.of(e).ifPresent(this::archiveTakesNothing);
            throw e;
        }
    }

    /** One line when an outage (or a refusal) begins, not one per retry; the batch is retried from the checkpoint. */
    private void archiveTakesNothing(ArchiveTrouble now) {
        if (trouble == null || trouble.kind() != now.kind()) {
            if (trouble == null) {
                troubleSince = System.nanoTime();
            } else {
                metrics.archiveTrouble.labelValues(trouble.kind().label).set(0);
            }
            LOG.warn(
                    "event=feeder_archive_unavailable instance={} why={} pending={} mirroredThrough={} cause=\"{}\" "
                            + "action=\"retrying the batch until the archive takes it; the fast tier keeps the writes\"",
                    options.instanceId(),
                    now.kind().label,
                    stream == null ? 0 : stream.pending(),
                    checkpoint == null ? "none" : describe(checkpoint.mirroredThrough()),
                    now.cause());
        }
        if (trouble == null || trouble.kind() != now.kind()) {
            publishArchiveUnavailable(
                    new FeederHealth.ArchiveUnavailable(now.kind().label, Instant.now(), firstLine(now.cause())));
        }
        trouble = now;
        metrics.archiveTrouble.labelValues(now.kind().label).set(1);
    }

    /** For {@code thermocline status} and the proxies: in the fast tier's shared state, which an archive outage does not touch. */
    private void publishArchiveUnavailable(FeederHealth.ArchiveUnavailable unavailable) {
        FeederHealth next = health.withArchiveUnavailable(unavailable);
        try {
            store.saveFeederHealth(next);
            health = next;
        } catch (RuntimeException e) {
            LOG.debug("event=feeder_health_not_saved error=\"{}\"", e.toString());
        }
    }

    private static String firstLine(String message) {
        String line = String.valueOf(message).lines().findFirst().orElse("");
        return line.length() > 300 ? line.substring(0, 300) : line;
    }

    private void archiveTookABatch() {
        if (trouble != null) {
            LOG.warn(
                    "event=feeder_archive_available instance={} was={} after_ms={} action=catching_up",
                    options.instanceId(),
                    trouble.kind().label,
                    (System.nanoTime() - troubleSince) / 1_000_000);
            metrics.archiveTrouble.labelValues(trouble.kind().label).set(0);
            trouble = null;
        }
        if (health.archiveUnavailable() != null) {
            publishArchiveUnavailable(null); // also what an earlier incarnation left there
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

    /**
     * Recovers from lost history: {@link #catchUp} from the fast tier. Mirrored-through stays where it
     * was until the resync ends, so the evictor, fence purges and archive reads keep waiting. A crash
     * during the resync resumes from the old checkpoint, loses history again and resyncs again.
     */
    private void resync(MongoException cause) throws InterruptedException {
        metrics.historyLost.inc();
        Instant detected = Instant.now();
        LOG.warn(
                "event=feeder_history_lost instance={} mirroredThrough={} error=\"{}\" action=resync",
                options.instanceId(),
                describe(checkpoint.mirroredThrough()),
                cause.getMessage());
        health = health.withHistoryLost(new FeederHealth.HistoryLoss(detected, null, 0, 0));
        store.saveFeederHealth(health);
        Resync.Result result = catchUp();
        health = health.withHistoryLost(
                new FeederHealth.HistoryLoss(detected, Instant.now(), result.upserted(), result.deleted()));
        store.saveFeederHealth(health);
        LOG.warn(
                "event=feeder_resynced instance={} upserted={} deleted={} mirroredThrough={}",
                options.instanceId(),
                result.upserted(),
                result.deleted(),
                describe(checkpoint.mirroredThrough()));
    }

    /**
     * The very first start: the proxy may have acknowledged writes on the fast tier before any feeder
     * ran (the proxy and the feeder start independently), and no stream reaches back to them with
     * certainty (the oplog may have rolled, and reading its start needs rights on {@code local}). So the
     * first start is a resync: afterwards the archive holds every fast-tier document and every user delete
     * (fenced) made before it. Until then nothing is published as mirrored (the checkpoint keeps
     * {@link FeederCheckpoint#NOTHING_MIRRORED}): archive reads wait and fail retryably rather than miss
     * those writes, and a crash during it starts the first start over.
     */
    private void firstStart() throws InterruptedException {
        LOG.info("event=feeder_first_start instance={} action=resync", options.instanceId());
        Resync.Result result = catchUp();
        LOG.info(
                "event=feeder_started_fresh instance={} upserted={} deleted={} mirroredThrough={}",
                options.instanceId(),
                result.upserted(),
                result.deleted(),
                describe(checkpoint.mirroredThrough()));
    }

    /**
     * Opens a fresh change stream at a probe written now (BEFORE the scan, so every write after it
     * reaches the feeder after the resync's writes; the probe is majority-acknowledged, so the scan
     * sees every write before it), resyncs the archive from the fast tier ({@link Resync}), then
     * checkpoints just before the probe: the archive now holds every write up to it, or a newer version
     * of its document.
     */
    private Resync.Result catchUp() throws InterruptedException {
        metrics.resyncing.set(1);
        try {
            renewLease();
            BsonTimestamp start = barrier.probe();
            outstandingProbe = start;
            lastProbeNanos = System.nanoTime();
            subscribe(null, start, null);
            Resync.Result result = new Resync(fast, archive, store, writer).run(policies, () -> {
                renewLease();
                return archiveWriteTimeoutMillis();
            });
            options.faults().reached(FaultPoint.FEEDER_RESYNCED);
            // a document deleted between the stream's start and the scan was not copied: its delete must be applied
            // first
            unresolved.hold(checkpoint.mirroredThrough(), barrier.probe());
            BsonTimestamp through =
                    unresolved.publishable(checkpoint.mirroredThrough(), BatchPlanner.justBefore(start), null);
            checkpoint = store.saveFeederCheckpoint(
                    checkpoint, withLease(checkpoint, null, through, null, checkpoint.mirroredEvents(), 0, 0));
            own = new OwnTransactions(null);
            deadLetterCount = deadLetters.count();
            publishDeadLetters();
            return result;
        } finally {
            metrics.resyncing.set(0);
        }
    }

    /** Re-writes the checkpoint unchanged with a fresh lease (long work between batches). */
    private void renewLease() {
        checkpoint = store.saveFeederCheckpoint(
                checkpoint,
                withLease(
                        checkpoint,
                        checkpoint.resumeToken(),
                        checkpoint.mirroredThrough(),
                        checkpoint.openOwnTransaction(),
                        checkpoint.mirroredEvents(),
                        checkpoint.lagSeconds(),
                        checkpoint.pendingEvents()));
    }

    private boolean open() throws InterruptedException {
        store.ensureCollections();
        FeederCheckpoint current = store.feederCheckpoint();
        Instant now = Instant.now();
        if (current.owner() != null
                && !current.owner().equals(options.instanceId())
                && current.leaseExpiresAt().isAfter(now)) {
            LOG.info("event=feeder_lease_held owner={} until={}", current.owner(), current.leaseExpiresAt());
            return false;
        }
        checkpoint = store.saveFeederCheckpoint(
                current,
                withLease(
                        current,
                        current.resumeToken(),
                        current.mirroredThrough(),
                        current.openOwnTransaction(),
                        current.mirroredEvents(),
                        current.lagSeconds(),
                        current.pendingEvents()));
        own = new OwnTransactions(checkpoint.openOwnTransaction());
        health = store.feederHealth();
        deadLetterCount = deadLetters.count();
        lastDeadLetterRetryNanos = System.nanoTime();
        publishDeadLetters();
        LOG.debug(
                "event=feeder_open instance={} openOwnTransaction={}",
                options.instanceId(),
                checkpoint.openOwnTransaction());
        if (checkpoint.resumeToken() != null
                || !checkpoint.mirroredThrough().equals(FeederCheckpoint.NOTHING_MIRRORED)) {
            // what the previous incarnation (or this one, before a retry) held back is not known: hold until the stream
            // passes now
            unresolved.hold(checkpoint.mirroredThrough(), barrier.probe());
        }
        if (checkpoint.resumeToken() != null) {
            subscribe(checkpoint.resumeToken(), null, checkpoint.openOwnTransaction());
            LOG.info(
                    "event=feeder_resumed instance={} mirroredThrough={}",
                    options.instanceId(),
                    describe(checkpoint.mirroredThrough()));
        } else if (checkpoint.mirroredThrough().equals(FeederCheckpoint.NOTHING_MIRRORED)) {
            firstStart();
        } else {
            BsonTimestamp start = justAfter(checkpoint.mirroredThrough());
            subscribe(null, start, checkpoint.openOwnTransaction());
            LOG.info(
                    "event=feeder_restarted_before_first_batch instance={} at={}",
                    options.instanceId(),
                    describe(start));
        }
        return true;
    }

    /**
     * Opens the change stream after {@code resumeToken}, or at {@code startAt} when there is none;
     * {@code openOwn} is the own transaction it may start inside (as {@link #own} was restored).
     */
    private void subscribe(BsonDocument resumeToken, BsonTimestamp startAt, TransactionId openOwn) {
        streamIsLean = leanThrough != null;
        lastReceived = null;
        List<Bson> pipeline =
                streamIsLean ? LargeEvents.leanPipeline(matchFilter()) : List.of(Aggregates.match(matchFilter()));
        ChangeStreamPublisher<BsonDocument> publisher = fast.watch(pipeline, BsonDocument.class)
                .fullDocument(streamIsLean ? FullDocument.DEFAULT : FullDocument.UPDATE_LOOKUP)
                .batchSize(config.batchSize())
                .maxAwaitTime(options.probeInterval().toMillis(), TimeUnit.MILLISECONDS);
        publisher = resumeToken != null ? publisher.resumeAfter(resumeToken) : publisher.startAtOperationTime(startAt);
        stream = new EventQueue(config.batchSize(), openOwn);
        publisher.subscribe(stream);
    }

    private Bson matchFilter() {
        List<Bson> namespaces = new ArrayList<>();
        for (CollectionPolicy policy : policies) {
            namespaces.add(
                    Filters.and(Filters.eq("ns.db", policy.database()), Filters.eq("ns.coll", policy.collection())));
        }
        namespaces.add(
                Filters.and(Filters.eq("ns.db", MetadataStore.DATABASE), Filters.in("ns.coll", MetadataStore.WATCHED)));
        return Filters.or(namespaces);
    }

    private void idle() {
        long now = System.nanoTime();
        if (outstandingProbe != null
                && now - lastProbeNanos > options.probeInterval().toNanos()) {
            double lag = (now - lastProbeNanos) / 1e9;
            metrics.lagSeconds.set(lag);
        }
        if (now - lastProbeNanos >= options.probeInterval().toNanos()) {
            BsonTimestamp probe = barrier.probe();
            if (outstandingProbe == null) {
                outstandingProbe = probe;
                lastProbeNanos = now;
            }
        }
    }

    private void mirror(List<ChangeEvent> events) throws InterruptedException {
        MirrorPlan plan = planner.plan(events, own);
        if (System.nanoTime() > leaseValidUntilNanos) {
            throw new StaleStateException("the feeder's lease ran out before its archive write; re-acquiring");
        }
        if (plan.missingImageAt() != null) {
            // the probe is written after the lookup, so the delete that emptied it comes before the probe in the stream
            BsonTimestamp probe = barrier.probe();
            unresolved.hold(BatchPlanner.justBefore(plan.missingImageAt()), probe);
            metrics.events.labelValues("missing_image").inc();
            LOG.debug(
                    "event=feeder_missing_image at={} heldUntil={}", describe(plan.missingImageAt()), describe(probe));
        }
        boolean deadLettersChanged = false;
        boolean wrote = false;
        for (Map.Entry<Namespace, List<MirrorAction>> entry : plan.actions().entrySet()) {
            if (entry.getValue().isEmpty()) {
                continue;
            }
            wrote = true;
            ArchiveWriter.Outcome outcome =
                    writer.write(entry.getKey(), entry.getValue(), this::archiveWriteTimeoutMillis);
            long cleared = deadLetterCount + outcome.deadLettered() > 0
                    ? deadLetters.clear(entry.getKey(), outcome.succeeded())
                    : 0;
            deadLettersChanged |= outcome.deadLettered() > 0 || cleared > 0;
        }
        if (deadLettersChanged) {
            deadLetterCount = deadLetters.count();
            publishDeadLetters();
        }
        if (wrote) {
            archiveTookABatch();
            // a batch of own events, probes and fence expiries only never waits for the archive
            options.faults().reached(FaultPoint.FEEDER_ARCHIVE_WRITTEN);
        }

        BsonTimestamp last = events.get(events.size() - 1).clusterTime();
        if (outstandingProbe != null && last != null && last.compareTo(outstandingProbe) >= 0) {
            outstandingProbe = null;
        }
        int pending = stream.pending();
        double lag = pending > 0 && last != null
                ? Math.max(0, Instant.now().getEpochSecond() - (last.getTime() & 0xFFFFFFFFL))
                : 0;
        // the previous checkpoint was written while this batch went to the archive; only now wait for it
        settle();
        FeederCheckpoint base = checkpoint;
        BsonTimestamp through = unresolved.publishable(base.mirroredThrough(), plan.mirroredThrough(), last);
        FeederCheckpoint next = new FeederCheckpoint(
                plan.resumeToken(),
                through,
                plan.openOwnTransaction(),
                base.mirroredEvents() + plan.counts().mirrored(),
                lag,
                pending,
                options.instanceId(),
                Instant.now().plus(options.leaseDuration()),
                base.version());
        long sentAt = System.nanoTime();
        inFlight = checkpointer.submit(() -> {
            FeederCheckpoint saved = store.saveFeederCheckpoint(base, next);
            leaseValidUntilNanos = sentAt + options.leaseDuration().toNanos() * 2 / 3;
            checkpoint = saved;
            return saved;
        });

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

    /**
     * Waits for the checkpoint in flight, if any: afterwards {@link #checkpoint} is the persisted one.
     * A failed write (another instance took over, the fast tier is unreachable) is thrown here.
     */
    private void settle() throws InterruptedException {
        Future<FeederCheckpoint> pendingWrite = inFlight;
        if (pendingWrite == null) {
            return;
        }
        inFlight = null;
        try {
            pendingWrite.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException("the feeder's checkpoint write failed", e.getCause());
        }
        options.faults().reached(FaultPoint.FEEDER_CHECKPOINTED);
    }

    /** Settles, and forgets a failed checkpoint write: the caller re-reads the stored one. */
    private void settleQuietly() {
        try {
            settle();
        } catch (InjectedCrash crash) {
            throw crash;
        } catch (RuntimeException e) {
            LOG.debug("event=feeder_checkpoint_dropped error=\"{}\"", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A write still in flight when the lease runs out could land after a successor's newer writes:
     * the driver abandons it (and the server stops it, maxTimeMS) before the lease expires.
     */
    private long archiveWriteTimeoutMillis() {
        long leaseLeftMillis = (leaseValidUntilNanos - System.nanoTime()) / 1_000_000
                + options.leaseDuration().toMillis() / 3;
        if (leaseLeftMillis <= 0) {
            throw new StaleStateException("the feeder's lease ran out during its archive writes; re-acquiring");
        }
        return leaseLeftMillis;
    }

    /**
     * Writes each dead-lettered document's current fast-tier version again; a success clears the
     * record. Runs between batches on the feeder's thread, so every later event of the document is
     * applied after it (as with {@code updateLookup}, the looked-up version is never older than an
     * event already mirrored). A document gone from the fast tier keeps its record until its delete
     * event is mirrored (the evictor never removes a dead-lettered document).
     */
    private void retryDeadLetters() {
        lastDeadLetterRetryNanos = System.nanoTime();
        if (System.nanoTime() > leaseValidUntilNanos) {
            throw new StaleStateException("the feeder's lease ran out before its dead-letter retry; re-acquiring");
        }
        for (DeadLetters.Letter letter : deadLetters.oldest(100)) {
            BsonDocument current = Blocking.single(letter.namespace()
                            .in(fast)
                            .find(Filters.eq("_id", letter.documentId()))
                            .first())
                    .orElse(null);
            if (current == null) {
                continue;
            }
            ArchiveWriter.Outcome outcome = writer.write(
                    letter.namespace(),
                    List.of(new MirrorAction.Upsert(letter.namespace(), letter.documentId(), current)),
                    this::archiveWriteTimeoutMillis);
            deadLetters.clear(letter.namespace(), outcome.succeeded());
        }
        deadLetterCount = deadLetters.count();
        publishDeadLetters();
    }

    private void publishDeadLetters() {
        metrics.deadLetters.set(deadLetterCount);
        String oldest = deadLetterCount == 0
                ? null
                : deadLetters.oldest(1).stream()
                        .findFirst()
                        .map(DeadLetters.Letter::summary)
                        .orElse(null);
        FeederHealth next = health.withDeadLetters(deadLetterCount, oldest);
        if (!next.equals(health)) {
            store.saveFeederHealth(next);
            health = next;
        }
    }

    private FeederCheckpoint withLease(
            FeederCheckpoint base,
            BsonDocument token,
            BsonTimestamp through,
            TransactionId openOwn,
            long mirrored,
            double lag,
            long pending) {
        leaseValidUntilNanos = System.nanoTime() + options.leaseDuration().toNanos() * 2 / 3;
        return new FeederCheckpoint(
                token,
                through,
                openOwn,
                mirrored,
                lag,
                pending,
                options.instanceId(),
                Instant.now().plus(options.leaseDuration()),
                base.version());
    }

    private void closeStream() {
        if (stream != null) {
            stream.close();
            stream = null;
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
        closeStream();
        writer.close();
        checkpointer.shutdown();
    }
}
