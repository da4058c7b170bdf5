package io.thermocline.tiering.feeder;

import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.FeederHealth;
import io.thermocline.tiering.metadata.MetadataStore;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the feeder reports about its health besides lag, for {@code thermocline status} and the proxies
 * ({@link FeederHealth}, in the fast tier's shared state, which an archive outage does not touch) and for
 * Prometheus: an archive that takes no batch (an outage or a refusal), lost change-stream history and its resync,
 * and the dead letters waiting.
 */
final class HealthReport {

    // the feeder's logger: these are the feeder's events
    private static final Logger LOG = LoggerFactory.getLogger(Feeder.class);

    private final MetadataStore store;
    private final FeederMetrics metrics;
    private final String instanceId;

    private FeederHealth health = FeederHealth.HEALTHY;
    /** Why the archive took no batch since {@link #troubleSince} (null while it takes them). */
    private ArchiveTrouble trouble;

    private long troubleSince;

    HealthReport(MetadataStore store, FeederMetrics metrics, String instanceId) {
        this.store = store;
        this.metrics = metrics;
        this.instanceId = instanceId;
    }

    /** Continues from what is published (by an earlier incarnation, too), when the feeder takes the lease. */
    void reload() {
        health = store.feederHealth();
    }

    /**
     * One line when an outage (or a refusal) begins, not one per retry; the batch is retried from the checkpoint.
     * {@code checkpoint} is the feeder's last (null before its first).
     */
    void archiveTakesNothing(ArchiveTrouble now, int pending, FeederCheckpoint checkpoint) {
        if (trouble == null || trouble.kind() != now.kind()) {
            if (trouble == null) {
                troubleSince = System.nanoTime();
            } else {
                metrics.archiveTrouble.labelValues(trouble.kind().label).set(0);
            }
            LOG.warn(
                    "event=feeder_archive_unavailable instance={} why={} pending={} mirroredThrough={} cause=\"{}\" "
                            + "action=\"retrying the batch until the archive takes it; the fast tier keeps the writes\"",
                    instanceId,
                    now.kind().label,
                    pending,
                    checkpoint == null ? "none" : Feeder.describe(checkpoint.mirroredThrough()),
                    now.cause());
        }
        if (trouble == null || trouble.kind() != now.kind()) {
            publishArchiveUnavailable(
                    new FeederHealth.ArchiveUnavailable(now.kind().label, Instant.now(), firstLine(now.cause())));
        }
        trouble = now;
        metrics.archiveTrouble.labelValues(now.kind().label).set(1);
    }

    void archiveTookABatch() {
        if (trouble != null) {
            LOG.warn(
                    "event=feeder_archive_available instance={} was={} after_ms={} action=catching_up",
                    instanceId,
                    trouble.kind().label,
                    (System.nanoTime() - troubleSince) / 1_000_000);
            metrics.archiveTrouble.labelValues(trouble.kind().label).set(0);
            trouble = null;
        }
        if (health.archiveUnavailable() != null) {
            publishArchiveUnavailable(null); // also what an earlier incarnation left there
        }
    }

    /** The resync after lost history began ({@code detected}); {@link #resynced} reports its end. */
    void historyLost(Instant detected) {
        health = health.withHistoryLost(new FeederHealth.HistoryLoss(detected, null, 0, 0));
        store.saveFeederHealth(health);
    }

    void resynced(Instant detected, Resync.Result result) {
        health = health.withHistoryLost(
                new FeederHealth.HistoryLoss(detected, Instant.now(), result.upserted(), result.deleted()));
        store.saveFeederHealth(health);
    }

    /** {@code oldest}: the oldest letter's summary (null when none). */
    void deadLetters(long count, String oldest) {
        FeederHealth next = health.withDeadLetters(count, oldest);
        if (!next.equals(health)) {
            store.saveFeederHealth(next);
            health = next;
        }
    }

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
}
