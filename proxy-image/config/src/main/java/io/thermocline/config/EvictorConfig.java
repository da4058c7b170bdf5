package io.thermocline.config;

import java.time.Duration;

/** How often and how fast the evictor removes documents older than their window. */
public record EvictorConfig(Duration interval, int batchSize, int maxDocumentsPerSecond) {

    public static EvictorConfig defaults() {
        return new EvictorConfig(Duration.ofMinutes(1), 500, 5000);
    }
}
