package io.thermocline.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;

/** The benchmarks' {@code key=value} arguments ({@code -Dbench.args}); a bare word is a flag, {@code true}. */
public final class BenchmarkArgs {

    private BenchmarkArgs() {
    }

    public static Map<String, String> parse(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            options.put(eq < 0 ? a : a.substring(0, eq), eq < 0 ? "true" : a.substring(eq + 1));
        }
        return options;
    }
}
