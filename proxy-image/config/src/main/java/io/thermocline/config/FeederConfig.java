package io.thermocline.config;

import java.time.Duration;

/** How the feeder batches mirrored writes to the archive. */
public record FeederConfig(int batchSize, Duration maxBatchWait, boolean coalesce) {

    public static FeederConfig defaults() {
        return new FeederConfig(1000, Duration.ofMillis(100), true);
    }
}
