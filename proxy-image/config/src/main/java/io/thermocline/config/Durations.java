package io.thermocline.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people write them in configs: {@code 30d}, {@code 12h}, {@code 90m}, {@code 5s}, {@code 100ms}. */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d|w)");

    private Durations() {
    }

    /** Parses a short form or an ISO-8601 duration ({@code PT5S}); throws IllegalArgumentException otherwise. */
    public static Duration parse(String text) {
        String s = text.trim();
        Matcher m = SHORT.matcher(s);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                case "d" -> Duration.ofDays(n);
                case "w" -> Duration.ofDays(7 * n);
                default -> throw new IllegalStateException(m.group(2));
            };
        }
        try {
            return Duration.parse(s);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration; write e.g. 30d, 12h, 90m, 5s or 100ms");
        }
    }

    /** The shortest exact short form: 30d, 36h, 100ms. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0s";
        }
        long[] units = {7L * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000, 1};
        String[] names = {"w", "d", "h", "m", "s", "ms"};
        for (int i = 0; i < units.length; i++) {
            if (ms % units[i] == 0) {
                return (ms / units[i]) + names[i];
            }
        }
        throw new IllegalStateException();
    }
}
