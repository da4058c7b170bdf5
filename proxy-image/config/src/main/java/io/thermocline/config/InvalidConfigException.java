package io.thermocline.config;

import java.util.List;

/** A configuration that cannot run; each problem names the field and the fix. */
public class InvalidConfigException extends RuntimeException {

    private final List<String> problems;

    public InvalidConfigException(List<String> problems) {
        super("invalid Thermocline configuration:\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
