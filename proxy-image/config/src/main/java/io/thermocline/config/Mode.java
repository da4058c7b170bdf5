package io.thermocline.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;

/**
 * What the fleet does with the tiers (top-level {@code mode}, docs/adoption.md): {@code shadow} keeps the
 * archive authoritative while the fast tier fills and the proxy compares; {@code tiered} is normal operation;
 * {@code draining} hands the archive back. The config only requests a mode: the fleet-wide mode document
 * decides what every process does.
 */
public enum Mode {
    SHADOW,
    TIERED,
    DRAINING;

    @JsonValue
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static Mode parse(String value) {
        return Arrays.stream(values()).filter(v -> v.configName().equals(value)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("'" + value + "' is not a mode; use shadow (archive answers,"
                        + " the fast tier is compared), tiered (the default) or draining (hand the archive back)"));
    }
}
