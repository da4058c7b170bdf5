package io.thermocline.app.logging;

import java.util.Map;
import java.util.Optional;

/** The log settings read from the environment before logging starts (logback.xml reads the same names). */
public final class LogFormat {

    public static final String FORMAT = "THERMOCLINE_LOG_FORMAT";
    public static final String LEVEL = "THERMOCLINE_LOG_LEVEL";

    private LogFormat() {
    }

    /** A sentence when a setting would leave the process without logs (logback has no appender for an unknown name). */
    public static Optional<String> problem(Map<String, String> env) {
        String format = env.get(FORMAT);
        if (format != null && !format.equals("text") && !format.equals("json")) {
            return Optional.of(FORMAT + ": '" + format + "' is not a log format; use text (the default) or json (one JSON object per line)");
        }
        String level = env.get(LEVEL);
        if (level != null && !level.toUpperCase(java.util.Locale.ROOT).matches("TRACE|DEBUG|INFO|WARN|ERROR|OFF")) {
            return Optional.of(LEVEL + ": '" + level + "' is not a log level; use TRACE, DEBUG, INFO (the default), WARN, ERROR or OFF");
        }
        return Optional.empty();
    }
}
