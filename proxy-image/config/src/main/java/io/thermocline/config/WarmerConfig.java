package io.thermocline.config;

/** How fast the warmer copies documents inside the window from the archive. */
public record WarmerConfig(int batchSize, int maxDocumentsPerSecond) {

    public static WarmerConfig defaults() {
        return new WarmerConfig(500, 5000);
    }
}
