package io.thermocline.proxy.chaos;

import java.util.stream.LongStream;

/** The seeds a randomized test runs, from a system property such as {@code 1-5}, {@code 7,19} or {@code 1-3,40}. */
public final class Seeds {

    private Seeds() {
    }

    public static LongStream from(String property, String defaultSpec) {
        String spec = System.getProperty(property, defaultSpec).trim();
        LongStream.Builder seeds = LongStream.builder();
        for (String part : spec.split(",")) {
            String[] range = part.trim().split("-");
            long from = Long.parseLong(range[0].trim());
            long to = range.length > 1 ? Long.parseLong(range[1].trim()) : from;
            for (long seed = from; seed <= to; seed++) {
                seeds.add(seed);
            }
        }
        return seeds.build();
    }
}
