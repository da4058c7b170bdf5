package io.thermocline.tiering.feeder;

import com.mongodb.MongoException;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Instant;
import java.util.List;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the archive up to the fast tier where no change stream reaches back far enough: at the feeder's very
 * first start, and after the fast tier's oplog lost the feeder's resume point. Run by the feeder holding the lease;
 * afterwards the checkpoint (with no own transaction open) publishes the archive as mirrored just before a probe
 * written before the {@link Resync} scan, and the stream is open at that probe.
 */
final class CatchUp {

    // the feeder's logger: these are the feeder's events
    private static final Logger LOG = LoggerFactory.getLogger(Feeder.class);

    private final Resync resync;
    private final List<CollectionPolicy> policies;
    private final LeasedCheckpoint checkpoint;
    private final TieredChangeStream stream;
    private final LagProbe probe;
    private final MirrorBarrier barrier;
    private final UnresolvedWrites unresolved;
    private final DeadLetterRetry deadLetters;
    private final HealthReport health;
    private final FeederMetrics metrics;
    private final Feeder.Options options;

    CatchUp(
            Resync resync,
            List<CollectionPolicy> policies,
            LeasedCheckpoint checkpoint,
            TieredChangeStream stream,
            LagProbe probe,
            MirrorBarrier barrier,
            UnresolvedWrites unresolved,
            DeadLetterRetry deadLetters,
            HealthReport health,
            FeederMetrics metrics,
            Feeder.Options options) {
        this.resync = resync;
        this.policies = policies;
        this.checkpoint = checkpoint;
        this.stream = stream;
        this.probe = probe;
        this.barrier = barrier;
        this.unresolved = unresolved;
        this.deadLetters = deadLetters;
        this.health = health;
        this.metrics = metrics;
        this.options = options;
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
    void firstStart() throws InterruptedException {
        LOG.info("event=feeder_first_start instance={} action=resync", options.instanceId());
        Resync.Result result = run();
        LOG.info(
                "event=feeder_started_fresh instance={} upserted={} deleted={} mirroredThrough={}",
                options.instanceId(),
                result.upserted(),
                result.deleted(),
                Feeder.describe(checkpoint.current().mirroredThrough()));
    }

    /**
     * Recovers from lost history. Mirrored-through stays where it was until the resync ends, so the
     * evictor, fence purges and archive reads keep waiting. A crash during the resync resumes from the
     * old checkpoint, loses history again and resyncs again.
     */
    void afterHistoryLost(MongoException cause) throws InterruptedException {
        metrics.historyLost.inc();
        Instant detected = Instant.now();
        LOG.warn(
                "event=feeder_history_lost instance={} mirroredThrough={} error=\"{}\" action=resync",
                options.instanceId(),
                Feeder.describe(checkpoint.current().mirroredThrough()),
                cause.getMessage());
        health.historyLost(detected);
        Resync.Result result = run();
        health.resynced(detected, result);
        LOG.warn(
                "event=feeder_resynced instance={} upserted={} deleted={} mirroredThrough={}",
                options.instanceId(),
                result.upserted(),
                result.deleted(),
                Feeder.describe(checkpoint.current().mirroredThrough()));
    }

    /**
     * Writes a probe (majority-acknowledged, so the scan sees every write before it), resyncs the archive from the
     * fast tier ({@link Resync}), checkpoints just before the probe, and only then opens a fresh change stream at the
     * probe: every write after it reaches the feeder after the resync's writes, and the archive now holds every write
     * up to it, or a newer version of its document. The stream opens last so that a resync that fails midway leaves
     * none open: a stream opened before the scan outlived a failed scan, and the next round mirrored from the probe
     * and published mirrored-through past every write the scan never copied (issue 37,
     * {@code HistoryLossIntegrationTest#aResyncThatFailsBeforeItsScanPublishesNothingUntilAResyncFinishes}).
     */
    private Resync.Result run() throws InterruptedException {
        metrics.resyncing.set(1);
        try {
            checkpoint.renew();
            BsonTimestamp start = barrier.probe();
            probe.wrote(start);
            options.faults().reached(FaultPoint.FEEDER_RESYNC_STARTED);
            Resync.Result result = resync.run(policies, () -> {
                checkpoint.renew();
                return checkpoint.archiveWriteTimeoutMillis();
            });
            options.faults().reached(FaultPoint.FEEDER_RESYNCED);
            // a document deleted between the probe and the scan was not copied: its delete must be applied first
            BsonTimestamp mirroredThrough = checkpoint.current().mirroredThrough();
            unresolved.hold(mirroredThrough, barrier.probe());
            deadLetters.recount(); // the scan's writes may have cleared letters or set new ones aside
            checkpoint.resynced(unresolved.publishable(mirroredThrough, BatchPlanner.justBefore(start), null));
            stream.open(null, start, null);
            stream.restoreOwnTransactions(null);
            return result;
        } finally {
            metrics.resyncing.set(0);
        }
    }
}
