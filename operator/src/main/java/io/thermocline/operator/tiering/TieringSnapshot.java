package io.thermocline.operator.tiering;

import java.util.List;

/**
 * What the tiering looks like from the data: feeder lag, whether the archive holds every
 * fast-tier write ({@code drained}), document counts of the tiered collections, and the
 * unique secondary indexes of tiered collections ({@code db.coll: index}), which cannot be
 * enforced across two tiers.
 */
public record TieringSnapshot(Long feederLagSeconds, boolean drained, Long fastTierDocuments, Long archiveDocuments,
                              List<String> uniqueIndexes) {

    public TieringSnapshot {
        uniqueIndexes = uniqueIndexes == null ? List.of() : List.copyOf(uniqueIndexes);
    }

    public TieringSnapshot(Long feederLagSeconds, boolean drained, Long fastTierDocuments, Long archiveDocuments) {
        this(feederLagSeconds, drained, fastTierDocuments, archiveDocuments, List.of());
    }
}
