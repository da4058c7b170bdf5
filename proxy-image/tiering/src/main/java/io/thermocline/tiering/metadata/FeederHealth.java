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
 */
public record FeederHealth(long deadLetters, String oldestDeadLetter, HistoryLoss historyLost) {

    public static final FeederHealth HEALTHY = new FeederHealth(0, null, null);

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
        return new FeederHealth(count, oldest, historyLost);
    }

    public FeederHealth withHistoryLost(HistoryLoss loss) {
        return new FeederHealth(deadLetters, oldestDeadLetter, loss);
    }
}
