package io.thermocline.config;

import java.time.Duration;

/**
 * Shadow mode's sampling and its cutover gate: the share of fast-tier-answerable reads compared
 * out of band, and the evidence {@code shadow -> tiered} needs without an override (no divergence for
 * {@code cutoverQuietPeriod}, with at least {@code minComparisons} comparisons in it).
 * {@code queueCapacity} bounds the comparisons waiting to run; a full queue drops (and counts) new ones.
 */
public record ShadowConfig(double sampleRate, Duration cutoverQuietPeriod, long minComparisons, int queueCapacity) {

    public static ShadowConfig defaults() {
        return new ShadowConfig(0.1, Duration.ofHours(1), 1000, 1000);
    }
}
