package io.thermocline.config;

/**
 * The two replica sets. {@code fast} is null in pass-through mode, where the proxy
 * forwards everything to the archive.
 */
public record TiersConfig(TierConfig fast, TierConfig archive) {

    public boolean tiered() {
        return fast != null;
    }
}
