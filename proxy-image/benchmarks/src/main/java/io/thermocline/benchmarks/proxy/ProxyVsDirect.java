package io.thermocline.benchmarks.proxy;

import io.thermocline.benchmarks.ycsb.YcsbRun;
import io.thermocline.embedded.EmbeddedReplicaSet;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * YCSB workloads A and C, direct to a replica set and through the Thermocline proxy, in
 * one run, on one machine: the proxy's cost as a ratio of direct throughput. The replica
 * set is the embedded one (a single member, in this JVM); the proxy and each YCSB client
 * run in JVMs of their own, as they would in production.
 *
 * <p>Run: {@code mvn -q -Pbench -pl proxy-image/benchmarks -am package -DskipTests} then
 * {@code mvn -q -Pbench -pl proxy-image/benchmarks exec:exec -Dbench.main=io.thermocline.benchmarks.proxy.ProxyVsDirect}
 * (see docs/benchmarks/README.md). Arguments: {@code --seconds N} per cell (default 15),
 * {@code --records N} (default 10000), {@code --threads 8,32,64,128,256},
 * {@code --out docs/benchmarks/proxy-ycsb.md}.
 */
public final class ProxyVsDirect {

    record Cell(String workload, int threads, String target, YcsbRun.Result result) {
    }

    private ProxyVsDirect() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = options(args);
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "15"));
        int records = Integer.parseInt(opts.getOrDefault("records", "10000"));
        List<Integer> threads = opts.getOrDefault("threads", "8,32,64,128,256").lines()
                .flatMap(l -> List.of(l.split(",")).stream()).map(String::trim).map(Integer::parseInt).toList();
        Path out = Path.of(opts.getOrDefault("out", "docs/benchmarks/proxy-ycsb.md"));

        try (EmbeddedReplicaSet backend = EmbeddedReplicaSet.builder().name("bench").members(1).build().start()) {
            String direct = backend.connectionString();
            int proxyPort = freePort();
            Process proxy = startProxy(proxyPort, direct);
            try {
                awaitPort(proxyPort, 30_000);
                String viaProxy = "mongodb://127.0.0.1:" + proxyPort + "/ycsb";
                String directDb = direct.replace("/?", "/ycsb?");
                Map<String, String> base = new LinkedHashMap<>();
                base.put("recordcount", String.valueOf(records));
                base.put("fieldcount", "10");
                base.put("fieldlength", "100");
                base.put("requestdistribution", "zipfian");
                System.out.printf("loading %d records directly%n", records);
                Map<String, String> load = new LinkedHashMap<>(base);
                load.put("mongodb.url", directDb);
                load.put("threadcount", "8");
                load.put("operationcount", String.valueOf(records)); // CoreWorkload reads it in both phases
                YcsbRun.run(true, load, 600);

                List<Cell> cells = new ArrayList<>();
                for (String workload : List.of("A", "C")) {
                    Map<String, String> mix = new LinkedHashMap<>(base);
                    mix.put("readproportion", workload.equals("A") ? "0.5" : "1.0");
                    mix.put("updateproportion", workload.equals("A") ? "0.5" : "0");
                    mix.put("insertproportion", "0");
                    mix.put("scanproportion", "0");
                    mix.put("operationcount", "100000000");
                    mix.put("maxexecutiontime", String.valueOf(seconds));
                    warmUp(mix, directDb, viaProxy);
                    for (int t : threads) {
                        for (String target : List.of("direct", "proxy")) {
                            Map<String, String> p = new LinkedHashMap<>(mix);
                            p.put("threadcount", String.valueOf(t));
                            p.put("mongodb.url", target.equals("direct") ? directDb : viaProxy);
                            YcsbRun.Result r = YcsbRun.run(false, p, seconds + 120L);
                            cells.add(new Cell(workload, t, target, r));
                            System.out.printf(Locale.ROOT, "workload %s threads %3d %-6s %9.0f ops/s  read p99 %7.0f us  errors %d%n",
                                    workload, t, target, r.opsPerSecond(), r.percentile("READ", "99"), r.errors());
                        }
                    }
                }
                Files.createDirectories(out.toAbsolutePath().getParent());
                Files.writeString(out, report(cells, seconds, records));
                System.out.println("wrote " + out);
            } finally {
                proxy.destroy();
                proxy.waitFor();
            }
        }
    }

    private static void warmUp(Map<String, String> mix, String direct, String viaProxy) throws IOException, InterruptedException {
        for (String url : List.of(direct, viaProxy)) {
            Map<String, String> p = new LinkedHashMap<>(mix);
            p.put("threadcount", "32");
            p.put("maxexecutiontime", "5");
            p.put("mongodb.url", url);
            YcsbRun.run(false, p, 120);
        }
    }

    private static Process startProxy(int port, String archiveUri) throws IOException {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g", "-cp", System.getProperty("java.class.path"), "io.thermocline.app.Thermocline", "proxy",
                "--listen", "127.0.0.1:" + port, "--http", "127.0.0.1:0", "--archive-uri", archiveUri,
                "--instance-id", "bench-proxy");
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(Path.of(System.getProperty("java.io.tmpdir"), "thermocline-bench-proxy.log").toFile()).start();
    }

    static String report(List<Cell> cells, int seconds, int records) {
        StringBuilder md = new StringBuilder();
        md.append("# Proxy vs direct: YCSB workloads A and C\n\n");
        md.append("Generated by `ProxyVsDirect` on ").append(LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME))
                .append(" (").append(Runtime.getRuntime().availableProcessors()).append(" cores; client, proxy and server share them).\n");
        md.append("YCSB 0.17 core with the project's MongoDB binding, ").append(records).append(" records of 10 x 100 bytes, zipfian, ")
                .append(seconds).append(" s per cell after a 5 s warm-up per target. Backend: embedded single-member replica set. ")
                .append("Latencies in microseconds (HdrHistogram).\n\n");
        md.append("| workload | threads | direct ops/s | proxy ops/s | ratio | direct read p50/p95/p99 | proxy read p50/p95/p99 | direct update p99 | proxy update p99 | errors (direct/proxy) |\n");
        md.append("|---|---:|---:|---:|---:|---|---|---:|---:|---|\n");
        for (int i = 0; i + 1 < cells.size(); i += 2) {
            Cell d = cells.get(i);
            Cell p = cells.get(i + 1);
            md.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.0f | %.2f | %s | %s | %s | %s | %d/%d |%n",
                    d.workload(), d.threads(), d.result().opsPerSecond(), p.result().opsPerSecond(),
                    p.result().opsPerSecond() / d.result().opsPerSecond(),
                    pct(d.result(), "READ"), pct(p.result(), "READ"),
                    one(d.result(), "UPDATE"), one(p.result(), "UPDATE"), d.result().errors(), p.result().errors()));
        }
        return md.toString();
    }

    private static String pct(YcsbRun.Result r, String op) {
        return String.format(Locale.ROOT, "%.0f / %.0f / %.0f", r.percentile(op, "50"), r.percentile(op, "95"), r.percentile(op, "99"));
    }

    private static String one(YcsbRun.Result r, String op) {
        double v = r.percentile(op, "99");
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.0f", v);
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        return opts;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void awaitPort(int port, long timeoutMillis) throws InterruptedException, IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException notYet) {
                Thread.sleep(200);
            }
        }
        throw new IOException("proxy did not listen on port " + port + " within " + timeoutMillis + " ms; see its log in java.io.tmpdir");
    }
}
