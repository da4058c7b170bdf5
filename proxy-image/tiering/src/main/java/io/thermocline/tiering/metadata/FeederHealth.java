package io.thermocline.tiering.metadata;

import java.time.Instant;

/**
 * What the operator reports about the feeder besides its lag ({@code thermocline.state}, document
 * {@code feederHealth}): dead letters waiting (and the oldest, in one line), and the last time the
 * change stream's history was lost and how the resync went.
 *
 * @param deadLetters       mirror writes the archive refused for good, not yet resolved
 * @param oldestDeadLetter  {@link DeadLetters.Letter#summary()} of the oldest (null when none)
 * @param historyLost       the last loss of change-stream history (null: never)
 * @param archiveUnavailable why the archive takes no mirror write now (null while it takes them; docs/faults.md)
 */
public record FeederHealth(
        long deadLetters, String oldestDeadLetter, HistoryLoss historyLost, ArchiveUnavailable archiveUnavailable) {

    public static final FeederHealth HEALTHY = new FeederHealth(0, null, null, null);

    public FeederHealth(long deadLetters, String oldestDeadLetter, HistoryLoss historyLost) {
        this(deadLetters, oldestDeadLetter, historyLost, null);
    }

    /**
     * @param why    {@code unreachable} or {@code stalled} (an outage) or {@code refusing_writes} (a full disk, a read-only volume, a quota)
     * @param since  when the feeder first found it so
     * @param cause  the archive's (or the driver's) error, one line
     */
    public record ArchiveUnavailable(String why, Instant since, String cause) {}

    public FeederHealth withArchiveUnavailable(ArchiveUnavailable unavailable) {
        return new FeederHealth(deadLetters, oldestDeadLetter, historyLost, unavailable);
    }

    /**
     * @param detectedAt   when the feeder found its resume point gone from the fast tier's oplog
     * @param resyncedAt   when the resync finished (null while it runs)
     * @param upserted     archive documents the resync replaced or inserted
     * @param deleted      archive documents the resync deleted (user-delete fences)
     */
    public record HistoryLoss(Instant detectedAt, Instant resyncedAt, long upserted, long deleted) {
        public boolean resyncing() {
            return resyncedAt == null;
        }
    }

    public FeederHealth withDeadLetters(long count, String oldest) {
        return new FeederHealth(count, oldest, historyLost, archiveUnavailable);
    }

    public FeederHealth withHistoryLost(HistoryLoss loss) {
        return new FeederHealth(deadLetters, oldestDeadLetter, loss, archiveUnavailable);
    }
}
