package io.thermocline.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;

/**
 * Whether reads of a tiered collection that the client sends to the primary may be served by the archive's
 * secondaries ({@code collections[].secondaryReads}, docs/consistency.md "Secondary reads"). {@code primary}
 * (the default): as the client asked. {@code offload}: an archive-routed read may go to any archive member whose
 * applied optime covers the read's barrier point (the primary when none does), fewest requests in flight first.
 */
public enum SecondaryReads {
    PRIMARY,
    OFFLOAD;

    @JsonValue
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static SecondaryReads parse(String value) {
        return Arrays.stream(values()).filter(v -> v.configName().equals(value)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("'" + value + "' is not a secondaryReads policy; use primary"
                        + " (reads go where the client's read preference sends them, the default) or offload (archive-routed"
                        + " reads may be served by any archive member that has applied what the read must see)"));
    }
}
