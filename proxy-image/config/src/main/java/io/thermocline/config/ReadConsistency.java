package io.thermocline.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;

/**
 * What a read routed to the archive waits for ({@code proxy.readConsistency}, docs/consistency.md).
 * {@code linearizable}: every write the fast tier acknowledged before the proxy received the read, from
 * any client or proxy replica. {@code session}: only the writes the client's session has observed.
 */
public enum ReadConsistency {
    LINEARIZABLE,
    SESSION;

    @JsonValue
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static ReadConsistency parse(String value) {
        return Arrays.stream(values()).filter(v -> v.configName().equals(value)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("'" + value + "' is not a read consistency; use linearizable"
                        + " (every read sees every acknowledged write, the default) or session (read-your-writes within a"
                        + " causally consistent session, lower latency)"));
    }
}
