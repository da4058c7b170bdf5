package io.thermocline.benchmarks.ycsb;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time spent by each part of the benchmark (YCSB client with its driver, proxy, server,
 * the JVM itself) during a measured interval. Thread CPU time counts user and kernel time of
 * the thread, so it holds even when something else shares the machine, unlike ops/s; it tells
 * how much the proxy costs per operation next to what the client and the server cost.
 */
final class CpuShares {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Map<Long, Long> startByThread = new HashMap<>();
    private final long processStart;

    private CpuShares(long processStart) {
        this.processStart = processStart;
    }

    static CpuShares start() {
        CpuShares s = new CpuShares(processCpuNanos());
        for (long id : THREADS.getAllThreadIds()) {
            long cpu = THREADS.getThreadCpuTime(id);
            if (cpu >= 0) {
                s.startByThread.put(id, cpu);
            }
        }
        return s;
    }

    /** Microseconds of CPU per operation by part, over the interval since {@link #start()}. */
    Map<String, Double> perOperation(long operations) {
        Map<String, Long> nanos = new TreeMap<>();
        long threadsTotal = 0;
        for (long id : THREADS.getAllThreadIds()) {
            long cpu = THREADS.getThreadCpuTime(id);
            ThreadInfo info = THREADS.getThreadInfo(id);
            if (cpu < 0 || info == null) {
                continue;
            }
            long used = cpu - startByThread.getOrDefault(id, 0L);
            nanos.merge(part(info.getThreadName()), used, Long::sum);
            threadsTotal += used;
        }
        // GC and JIT threads are not Java threads: they show only in the process total.
        nanos.merge("jvm", Math.max(0, processCpuNanos() - processStart - threadsTotal), Long::sum);
        Map<String, Double> out = new TreeMap<>();
        nanos.forEach((k, v) -> out.put(k, v / 1000.0 / Math.max(1, operations)));
        return out;
    }

    private static String part(String thread) {
        if (thread.startsWith("ycsb-") || thread.startsWith("cluster-")) {
            return "client";
        }
        if (thread.startsWith("thermocline-proxy")) {
            return "proxy";
        }
        if (thread.startsWith("mongo-server")) {
            return "server";
        }
        return "jvm";
    }

    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
    }
}
