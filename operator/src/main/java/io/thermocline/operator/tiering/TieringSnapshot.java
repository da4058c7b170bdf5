package io.thermocline.operator.tiering;

import java.time.Instant;
import java.util.List;

/**
 * What the tiering looks like from the data: feeder lag, whether the archive holds every
 * fast-tier write ({@code drained}), document counts of the tiered collections, and where the
 * proxy cannot hold a tiered collection's unique secondary index across the tiers
 * ({@link UniqueIndexCoverage}: one sentence each).
 */
public record TieringSnapshot(
        Long feederLagSeconds,
        boolean drained,
        Long fastTierDocuments,
        Long archiveDocuments,
        List<String> uniqueIndexes,
        FeederAlerts feederAlerts) {

    /**
     * What the feeder reports in {@code thermocline.state} document {@code feederHealth}: mirror writes the
     * archive refused for good (dead letters) and a resync after lost change-stream history in progress.
     */
    public record FeederAlerts(long deadLetters, String oldestDeadLetter, Instant historyLostAt, boolean resyncing) {
        public static final FeederAlerts NONE = new FeederAlerts(0, null, null, false);
    }

    public TieringSnapshot {
        uniqueIndexes = uniqueIndexes == null ? List.of() : List.copyOf(uniqueIndexes);
        feederAlerts = feederAlerts == null ? FeederAlerts.NONE : feederAlerts;
    }

    public TieringSnapshot(
            Long feederLagSeconds,
            boolean drained,
            Long fastTierDocuments,
            Long archiveDocuments,
            List<String> uniqueIndexes) {
        this(feederLagSeconds, drained, fastTierDocuments, archiveDocuments, uniqueIndexes, FeederAlerts.NONE);
    }

    /**
     * Why the archive does not hold every fast-tier write, or null: a dead-lettered write exists only in the fast
     * tier (the evictor keeps it too), and while one is open the feeder's mirrored-through does not move.
     */
    public String heldOnlyInFastTier() {
        if (feederAlerts.deadLetters() <= 0) {
            return null;
        }
        return feederAlerts.deadLetters() + " dead-lettered write(s) the archive refused exist only in the fast tier"
                + (feederAlerts.oldestDeadLetter() == null ? "" : " (oldest: " + feederAlerts.oldestDeadLetter() + ")")
                + "; resolve them (fix the archive's index or validator, or the documents: the feeder retries every record)";
    }

    public TieringSnapshot(Long feederLagSeconds, boolean drained, Long fastTierDocuments, Long archiveDocuments) {
        this(feederLagSeconds, drained, fastTierDocuments, archiveDocuments, List.of());
    }
}
