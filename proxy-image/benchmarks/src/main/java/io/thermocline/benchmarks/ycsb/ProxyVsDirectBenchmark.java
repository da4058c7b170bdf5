package io.thermocline.benchmarks.ycsb;

import io.thermocline.benchmarks.BenchmarkArgs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import site.ycsb.DB;
import site.ycsb.Workload;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB workloads A and C at several thread counts, straight to a MongoDB wire server and
 * through the Thermocline proxy in front of the same server, in one run. Prints a Markdown
 * table and writes it to docs/benchmarks/proxy-ycsb.md. Not a test: nothing asserts timings.
 *
 * <p>The server (mongo-java-server, in memory) and the proxy ({@code thermocline proxy}) run in
 * JVMs of their own, as they do in production; the YCSB client runs in this one. All three
 * share the machine's cores. Each cell alternates direct and proxied slices ({@code rounds}) so
 * that a change in background load hits both sides alike, and records the CPU each process
 * used per operation.
 *
 * <p>Arguments (all optional): {@code seconds=10 rounds=2 warmup=30 records=10000 threads=8,32,64,128,256
 * workloads=A,C relay=netty|haproxy proxyJvm="" out=docs/benchmarks/proxy-ycsb.md}.
 *
 * <p>Run from the repository root (docs/benchmarks/README.md):
 * {@code mvn -q -Pbench -DskipTests -pl proxy-image/benchmarks -am verify -Dbench.args="seconds=8"}
 */
public final class ProxyVsDirectBenchmark {

    record Row(String workload, int threads, Result direct, Result proxy, Result relay) {}

    /** One side of a cell, summed over its slices. */
    static final class Result {
        long operations;
        long errors;
        long elapsedNanos;
        String firstError;
        final Histogram latencyMicros = new Histogram(3);
        final Map<String, Long> cpuNanos = new LinkedHashMap<>();

        void add(Slice s) {
            operations += s.operations;
            errors += s.errors;
            elapsedNanos += s.elapsedNanos;
            if (firstError == null) {
                firstError = s.firstError;
            }
            latencyMicros.add(s.latencyMicros);
            s.cpuNanos.forEach((k, v) -> cpuNanos.merge(k, v, Long::sum));
        }

        double opsPerSecond() {
            return operations / (elapsedNanos / 1e9);
        }

        double ms(double percentile) {
            return latencyMicros.getValueAtPercentile(percentile) / 1000.0;
        }

        /** CPU microseconds per operation used by {@code part}. */
        double cpuMicros(String part) {
            return cpuNanos.getOrDefault(part, 0L) / 1000.0 / Math.max(1, operations);
        }
    }

    private record Slice(
            long operations,
            long errors,
            String firstError,
            long elapsedNanos,
            Histogram latencyMicros,
            Map<String, Long> cpuNanos) {}

    /** The proxy's one user (from its users file); the backend and the byte relay take no login. */
    private static final String BENCH_USER = "ycsb";

    private static final String BENCH_PASSWORD = "ycsb-bench";

    private ProxyVsDirectBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchmarkArgs.parse(args);
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "10"));
        int rounds = Integer.parseInt(opts.getOrDefault("rounds", "2"));
        int warmup = Integer.parseInt(opts.getOrDefault("warmup", "30"));
        int records = Integer.parseInt(opts.getOrDefault("records", "10000"));
        List<Integer> threadCounts = new ArrayList<>();
        for (String t : opts.getOrDefault("threads", "8,32,64,128,256").split(",")) {
            threadCounts.add(Integer.parseInt(t.trim()));
        }
        List<String> proxyJvm = opts.getOrDefault("proxyJvm", "").isBlank()
                ? List.of()
                : List.of(opts.get("proxyJvm").trim().split("\\s+"));
        Path out = Path.of(opts.getOrDefault("out", "docs/benchmarks/proxy-ycsb.md"));
        // CoreWorkload reports into YCSB's static Measurements, which must be configured first.
        site.ycsb.measurements.Measurements.setProperties(new Properties());

        Path logs = Files.createTempDirectory("thermocline-bench");
        // The proxy runs as in production, with auth.mode required (the default): the client logs in with SCRAM and
        // every command is authorized, which is part of what an operation costs through the proxy. The backend has no
        // users, so the proxy's user comes from a file (with no login every proxied operation failed).
        Path users = logs.resolve("users.yaml");
        Files.writeString(
                users,
                "users:\n  - {user: " + BENCH_USER + ", db: admin, password: \"" + BENCH_PASSWORD
                        + "\", roles: [{role: readWrite, db: ycsb}]}\n");
        Path proxyConfig = logs.resolve("proxy.yaml");
        Files.writeString(proxyConfig, "auth:\n  mode: required\n  users: [file]\n  usersFile: \"" + users + "\"\n");
        int serverPort = ChildProcess.freePort();
        int proxyPort = ChildProcess.freePort();
        int relayPort = ChildProcess.freePort();
        List<Row> rows = new ArrayList<>();
        try (ChildProcess server = ChildProcess.java(
                        "server",
                        List.of("-Xmx2g"),
                        WireServerMain.class.getName(),
                        List.of(Integer.toString(serverPort)),
                        serverPort,
                        logs.resolve("server.log"));
                ChildProcess proxy = ChildProcess.java(
                        "proxy",
                        proxyJvm,
                        "io.thermocline.app.Thermocline",
                        List.of(
                                "proxy",
                                "--config=" + proxyConfig,
                                "--listen=127.0.0.1:" + proxyPort,
                                "--http=127.0.0.1:0",
                                "--archive-uri=mongodb://127.0.0.1:" + serverPort,
                                "--archive-connection-budget=64",
                                "--instance-id=bench"),
                        proxyPort,
                        logs.resolve("proxy.log"));
                ChildProcess relay = startRelay(opts.getOrDefault("relay", "netty"), relayPort, serverPort, logs)) {
            String direct = "mongodb://127.0.0.1:" + serverPort + "/?maxPoolSize=300";
            String viaProxy = "mongodb://" + BENCH_USER + ":" + BENCH_PASSWORD + "@127.0.0.1:" + proxyPort
                    + "/?maxPoolSize=300&authSource=admin";
            String viaRelay = "mongodb://127.0.0.1:" + relayPort + "/?maxPoolSize=300";
            Map<String, Supplier<Duration>> cpu = new LinkedHashMap<>();
            cpu.put("client", CpuShares::thisProcess);
            cpu.put("proxy", proxy::cpu);
            cpu.put("server", server::cpu);
            cpu.put("relay", relay::cpu);
            load(direct, records);
            // Let the JIT compile client, proxy and server paths before any cell is measured:
            // a proxy runs for days, so its compile time is not part of what an operation costs.
            for (String url : List.of(direct, viaProxy, viaRelay, direct, viaProxy, viaRelay)) {
                run("A", url, records, 32, Math.max(1, warmup / 4), cpu);
                run("C", url, records, 32, Math.max(1, warmup / 4), cpu);
            }
            for (String workload : opts.getOrDefault("workloads", "A,C").split(",")) {
                for (int threads : threadCounts) {
                    Result d = new Result();
                    Result p = new Result();
                    Result b = new Result();
                    int slice = Math.max(1, seconds / rounds);
                    for (int r = 0; r < rounds; r++) {
                        d.add(run(workload, direct, records, threads, slice, cpu));
                        p.add(run(workload, viaProxy, records, threads, slice, cpu));
                        b.add(run(workload, viaRelay, records, threads, slice, cpu));
                    }
                    Row row = new Row(workload, threads, d, p, b);
                    measuredSomething(row, logs);
                    rows.add(row);
                    System.out.println(format(row));
                }
            }
        } finally {
            MongoDbBinding.closeClients();
        }
        String table = table(rows, seconds, rounds, warmup, records, proxyJvm, opts.getOrDefault("relay", "netty"));
        System.out.println(table);
        Files.createDirectories(out.getParent());
        Files.writeString(out, table);
    }

    /**
     * The floor: {@code netty} is {@link ByteRelayMain}; {@code haproxy} is HAProxy in TCP mode
     * (a mature C relay, when it is installed), for a floor that owes nothing to the JVM.
     */
    private static ChildProcess startRelay(String kind, int port, int serverPort, Path logs) throws Exception {
        if (kind.equals("haproxy")) {
            Path cfg = logs.resolve("haproxy.cfg");
            Files.writeString(
                    cfg,
                    "global\n  nbthread 2\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 1h\n"
                            + "  timeout server 1h\nfrontend clients\n  bind 127.0.0.1:" + port
                            + "\n  default_backend server\n"
                            + "backend server\n  server s 127.0.0.1:" + serverPort + "\n");
            return ChildProcess.start(
                    "relay", List.of("haproxy", "-db", "-f", cfg.toString()), port, logs.resolve("relay.log"));
        }
        return ChildProcess.java(
                "relay",
                List.of(),
                ByteRelayMain.class.getName(),
                List.of(Integer.toString(port), Integer.toString(serverPort)),
                port,
                logs.resolve("relay.log"));
    }

    private static Properties properties(String workload, String url, int records) {
        Properties p = new Properties();
        p.setProperty("mongodb.url", url);
        p.setProperty("recordcount", Integer.toString(records));
        p.setProperty("operationcount", Integer.toString(Integer.MAX_VALUE));
        p.setProperty("requestdistribution", "zipfian");
        p.setProperty("readallfields", "true");
        p.setProperty("readproportion", workload.equals("A") ? "0.5" : "1.0");
        p.setProperty("updateproportion", workload.equals("A") ? "0.5" : "0");
        p.setProperty("scanproportion", "0");
        p.setProperty("insertproportion", "0");
        return p;
    }

    private static DB binding(Properties p) throws Exception {
        DB db = new MongoDbBinding();
        db.setProperties(p);
        db.init();
        return db;
    }

    private static void load(String url, int records) throws Exception {
        Properties p = properties("A", url, records);
        Workload w = new CoreWorkload();
        w.init(p);
        DB db = binding(p);
        Object state = w.initThread(p, 0, 1);
        for (int i = 0; i < records; i++) {
            if (!w.doInsert(db, state)) {
                throw new IllegalStateException("load failed at record " + i);
            }
        }
    }

    private static Slice run(
            String workload, String url, int records, int threads, int seconds, Map<String, Supplier<Duration>> cpu)
            throws Exception {
        Properties p = properties(workload, url, records);
        Workload w = new CoreWorkload();
        w.init(p);
        Recorder recorder = new Recorder(3);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong errors = new AtomicLong();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch done = new CountDownLatch(threads);
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<String> firstError =
                new java.util.concurrent.atomic.AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(
                    () -> {
                        try {
                            DB db = binding(p);
                            Object state = w.initThread(p, id, threads);
                            ready.countDown();
                            while (!stop.get()) {
                                long start = System.nanoTime();
                                boolean ok = w.doTransaction(db, state);
                                long took = System.nanoTime() - start;
                                if (measuring.get()) {
                                    recorder.recordValue(Math.max(1, took / 1000));
                                    ops.incrementAndGet();
                                    if (!ok) {
                                        errors.incrementAndGet();
                                    }
                                }
                            }
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            firstError.compareAndSet(null, e.toString());
                            ready.countDown();
                        } finally {
                            done.countDown();
                        }
                    },
                    "ycsb-" + t);
            th.setDaemon(true);
            th.start();
        }
        ready.await();
        Thread.sleep(Math.min(1000, seconds * 200L));
        recorder.reset();
        CpuShares shares = CpuShares.start(cpu);
        measuring.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long elapsed = System.nanoTime() - t0;
        Map<String, Long> used = shares.used();
        stop.set(true);
        done.await();
        return new Slice(ops.get(), errors.get(), firstError.get(), elapsed, recorder.getIntervalHistogram(), used);
    }

    /** Most errors a side may have and still count: YCSB's zipfian updates may fail now and then, never most of them. */
    private static final double MAX_ERROR_SHARE = 0.01;

    /**
     * Fails the run when a side of the cell measured nothing, or mostly errors: its ratio would be meaningless, so its
     * row is never printed. The message names the side, its first error and where to look.
     */
    static void measuredSomething(Row r, Path logs) {
        Map<String, Result> sides = new LinkedHashMap<>();
        sides.put("direct", r.direct);
        sides.put("proxy", r.proxy);
        sides.put("byte relay", r.relay);
        sides.forEach((side, result) -> {
            if (result.operations == 0 || result.errors > MAX_ERROR_SHARE * result.operations) {
                throw new IllegalStateException("workload " + r.workload + " at " + r.threads + " threads: the "
                        + side + " side measured " + result.operations + " operations with " + result.errors
                        + " errors (first: " + (result.firstError == null ? "none recorded" : result.firstError)
                        + "); no table is written from a run that compared nothing. " + fix(side, logs));
            }
        });
    }

    /** What to check for a side that failed: its process's log, and for the proxy the login its config asks for. */
    private static String fix(String side, Path logs) {
        String log = logs.resolve(
                        switch (side) {
                            case "proxy" -> "proxy.log";
                            case "byte relay" -> "relay.log";
                            default -> "server.log";
                        })
                .toString();
        return side.equals("proxy")
                ? "Read " + log + "; an Unauthorized or authentication error means the proxy's login (auth.mode"
                        + " required, the default) refused the benchmark's client: its user is in "
                        + logs.resolve("users.yaml") + ", named by " + logs.resolve("proxy.yaml")
                        + ", and the proxied URL must carry that user with authSource=admin"
                : "Read " + log + " and check that the " + side + " process is still up";
    }

    private static String format(Row r) {
        return String.format(
                "| %s | %d | %.0f | %.2f / %.2f / %.2f | %.0f | %.2f / %.2f / %.2f | **%.2f** | %.2f"
                        + " | %.0f + %.0f | %.0f + %.0f + %.0f | %.0f + %.0f + %.0f | %d / %d / %d |",
                r.workload,
                r.threads,
                r.direct.opsPerSecond(),
                r.direct.ms(50),
                r.direct.ms(95),
                r.direct.ms(99),
                r.proxy.opsPerSecond(),
                r.proxy.ms(50),
                r.proxy.ms(95),
                r.proxy.ms(99),
                r.proxy.opsPerSecond() / r.direct.opsPerSecond(),
                r.relay.opsPerSecond() / r.direct.opsPerSecond(),
                r.direct.cpuMicros("client"),
                r.direct.cpuMicros("server"),
                r.proxy.cpuMicros("client"),
                r.proxy.cpuMicros("proxy"),
                r.proxy.cpuMicros("server"),
                r.relay.cpuMicros("client"),
                r.relay.cpuMicros("relay"),
                r.relay.cpuMicros("server"),
                r.direct.errors,
                r.proxy.errors,
                r.relay.errors);
    }

    private static String table(
            List<Row> rows, int seconds, int rounds, int warmup, int records, List<String> proxyJvm, String relay) {
        StringBuilder s = new StringBuilder();
        s.append("# YCSB through the proxy vs direct\n\n");
        s.append("Generated by `io.thermocline.benchmarks.ycsb.ProxyVsDirectBenchmark` on ")
                .append(LocalDate.now())
                .append(": YCSB 0.17 CoreWorkload, project binding on the Java sync driver, ")
                .append(records)
                .append(" records of 10 x 100 bytes, zipfian, ")
                .append(seconds)
                .append(" s measured per cell and side in ")
                .append(rounds)
                .append(" alternating slices, after a warm-up of ")
                .append(warmup)
                .append(" s per side. Backend: mongo-java-server (memory) in its own JVM;")
                .append(" proxy (`thermocline proxy`, JVM options: ")
                .append(proxyJvm.isEmpty() ? "defaults" : String.join(" ", proxyJvm))
                .append(") in its own JVM with a pool of 64 connections; YCSB client in a third. All share ")
                .append(Runtime.getRuntime().availableProcessors())
                .append(" cores. The byte relay (")
                .append(
                        relay.equals("haproxy")
                                ? "HAProxy in TCP mode, 2 threads"
                                : "`ByteRelayMain`, Netty on the proxy's transport")
                .append(
                        ", one server connection per client connection, no message parsing) is the floor: what two extra")
                .append(" loopback hops cost with no protocol work at all.\n\n");
        s.append(
                "| workload | threads | direct ops/s | direct p50 / p95 / p99 ms | proxy ops/s | proxy p50 / p95 / p99 ms | proxy/direct"
                        + " | byte relay/direct | direct CPU us/op client + server | proxied CPU us/op client + proxy + server"
                        + " | relayed CPU us/op client + relay + server | errors direct / proxy / relay |\n");
        s.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        rows.forEach(r -> s.append(format(r)).append('\n'));
        return s.toString();
    }
}
