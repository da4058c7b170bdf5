package io.thermocline.benchmarks.ycsb;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * CPU time (user and kernel) used by each process of the benchmark during a measured interval.
 * Unlike ops/s it holds when something else shares the machine, and it tells what the proxy
 * costs per operation next to what the client and the server cost.
 */
final class CpuShares {
    private final Map<String, Supplier<Duration>> parts;
    private final Map<String, Duration> atStart = new LinkedHashMap<>();

    private CpuShares(Map<String, Supplier<Duration>> parts) {
        this.parts = parts;
        parts.forEach((name, cpu) -> atStart.put(name, cpu.get()));
    }

    static CpuShares start(Map<String, Supplier<Duration>> parts) {
        return new CpuShares(parts);
    }

    /** CPU nanoseconds used by each part since {@link #start}. */
    Map<String, Long> used() {
        Map<String, Long> out = new LinkedHashMap<>();
        parts.forEach((name, cpu) -> out.put(name, cpu.get().minus(atStart.get(name)).toNanos()));
        return out;
    }

    static Duration thisProcess() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? Duration.ofNanos(sun.getProcessCpuTime()) : Duration.ZERO;
    }
}
