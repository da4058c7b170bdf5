package io.thermocline.operator.tiering;

/**
 * What the tiering looks like from the data: feeder lag, whether the archive holds every
 * fast-tier write ({@code drained}), and document counts of the tiered collections.
 */
public record TieringSnapshot(Long feederLagSeconds, boolean drained, Long fastTierDocuments, Long archiveDocuments) {
}
