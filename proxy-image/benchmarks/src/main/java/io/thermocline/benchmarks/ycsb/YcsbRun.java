package io.thermocline.benchmarks.ycsb;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One YCSB client run in its own JVM (YCSB's measurements are process-wide singletons),
 * and what it printed: overall throughput and per-operation latency percentiles.
 */
public final class YcsbRun {

    private static final Pattern LINE = Pattern.compile("^\\[([A-Z_-]+)], ([^,]+), (.+)$");

    /** Throughput in ops/s and latency percentiles in microseconds, by operation (READ, UPDATE, ...). */
    public record Result(double opsPerSecond, Map<String, Map<String, Double>> latencies, long errors) {

        public double percentile(String operation, String percentile) {
            return latencies.getOrDefault(operation, Map.of()).getOrDefault(percentile + "thPercentileLatency(us)", Double.NaN);
        }
    }

    private YcsbRun() {
    }

    /** Runs {@code site.ycsb.Client} with the binding and the given properties; {@code load} selects the load phase. */
    public static Result run(boolean load, Map<String, String> properties, long timeoutSeconds) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                javaBinary(), "-Xmx1g", "-XX:+UseParallelGC", "-cp", System.getProperty("java.class.path"),
                "site.ycsb.Client", load ? "-load" : "-t", "-db", MongoDbClient.class.getName()));
        Map<String, String> all = new LinkedHashMap<>();
        all.put("workload", "site.ycsb.workloads.CoreWorkload");
        all.put("measurementtype", "hdrhistogram");
        all.put("hdrhistogram.percentiles", "50,95,99");
        all.putAll(properties);
        all.forEach((k, v) -> {
            command.add("-p");
            command.add(k + "=" + v);
        });
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Map<String, Map<String, Double>> latencies = new LinkedHashMap<>();
        double throughput = Double.NaN;
        long errors = 0;
        StringBuilder tail = new StringBuilder();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                tail.append(line).append('\n');
                if (tail.length() > 20_000) {
                    tail.delete(0, tail.length() - 10_000);
                }
                Matcher m = LINE.matcher(line.trim());
                if (!m.matches()) {
                    continue;
                }
                String section = m.group(1);
                String metric = m.group(2).trim();
                String value = m.group(3).trim();
                if (section.equals("OVERALL") && metric.equals("Throughput(ops/sec)")) {
                    throughput = Double.parseDouble(value);
                } else if (metric.startsWith("Return=") && !metric.equals("Return=OK") && !metric.equals("Return=NOT_FOUND")) {
                    errors += Long.parseLong(value);
                } else if (value.matches("-?[0-9.]+(E-?[0-9]+)?")) {
                    latencies.computeIfAbsent(section, s -> new LinkedHashMap<>()).put(metric, Double.parseDouble(value));
                }
            }
        }
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("YCSB did not finish within " + timeoutSeconds + " s");
        }
        if (process.exitValue() != 0 || Double.isNaN(throughput)) {
            throw new IOException("YCSB failed (exit " + process.exitValue() + "):\n" + tail);
        }
        return new Result(throughput, latencies, errors);
    }

    static String javaBinary() {
        return java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
