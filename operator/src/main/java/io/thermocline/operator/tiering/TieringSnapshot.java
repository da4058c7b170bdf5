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
     * archive refused for good (dead letters), a resync after lost change-stream history in progress, and an
     * archive that takes no mirror write at all now ({@code archiveUnavailable}, null while it takes them).
     */
    public record FeederAlerts(
            long deadLetters,
            String oldestDeadLetter,
            Instant historyLostAt,
            boolean resyncing,
            ArchiveOutage archiveUnavailable) {
        public static final FeederAlerts NONE = new FeederAlerts(0, null, null, false);

        public FeederAlerts(long deadLetters, String oldestDeadLetter, Instant historyLostAt, boolean resyncing) {
            this(deadLetters, oldestDeadLetter, historyLostAt, resyncing, null);
        }
    }

    /**
     * Why the feeder finds the archive takes no mirror write since {@code since}: {@code unreachable} or {@code stalled}
     * (an outage), or {@code refusing_writes} (a full disk, a read-only volume, a quota); {@code cause}: the archive's or
     * the driver's error (docs/faults.md).
     */
    public record ArchiveOutage(String why, Instant since, String cause) {}

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
