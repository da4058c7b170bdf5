package io.thermocline.benchmarks.ycsb;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.config.ConfigLoader;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import site.ycsb.DB;
import site.ycsb.Workload;
import site.ycsb.workloads.CoreWorkload;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * YCSB workloads A and C at several thread counts, straight to a MongoDB wire server and
 * through the Thermocline proxy in front of the same server, in one run. Prints a Markdown
 * table and writes it to docs/benchmarks/proxy-ycsb.md. Not a test: nothing asserts timings.
 *
 * <p>Arguments (all optional): {@code seconds=10 records=10000 threads=8,32,64,128,256 workloads=A,C out=docs/benchmarks/proxy-ycsb.md}.
 *
 * <p>Run from the repository root (docs/benchmarks/README.md):
 * {@code mvn -q -Pbench -DskipTests -pl proxy-image/benchmarks -am verify -Dbench.args="seconds=8"}
 */
public final class ProxyVsDirectBenchmark {

    private record Row(String workload, int threads, Result direct, Result proxy) {
    }

    private record Result(double opsPerSecond, double p50Ms, double p95Ms, double p99Ms, long errors, Map<String, Double> cpuMicrosPerOp) {
    }

    private ProxyVsDirectBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new java.util.HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            opts.put(a.substring(0, eq), a.substring(eq + 1));
        }
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "10"));
        int records = Integer.parseInt(opts.getOrDefault("records", "10000"));
        List<Integer> threadCounts = new ArrayList<>();
        for (String t : opts.getOrDefault("threads", "8,32,64,128,256").split(",")) {
            threadCounts.add(Integer.parseInt(t.trim()));
        }
        Path out = Path.of(opts.getOrDefault("out", "docs/benchmarks/proxy-ycsb.md"));
        // CoreWorkload reports into YCSB's static Measurements, which must be configured first.
        site.ycsb.measurements.Measurements.setProperties(new Properties());

        MongoServer backend = new MongoServer(new MemoryBackend());
        backend.bind("127.0.0.1", 0);
        String direct = "mongodb://127.0.0.1:" + backend.getLocalAddress().getPort() + "/?maxPoolSize=300";
        ProxyServer proxy = new ProxyServer(ProxySettings.from(ConfigLoader.parse(
                "proxy: {listenHost: 127.0.0.1, port: 0, httpHost: 127.0.0.1, httpPort: 0}\n"
                        + "tiers: {archive: {uri: 'mongodb://127.0.0.1:" + backend.getLocalAddress().getPort() + "', connectionBudget: 64}}\n"
                        + "fleet: {instanceId: bench}\n", Map.of()))).start();
        String viaProxy = "mongodb://127.0.0.1:" + proxy.port() + "/?maxPoolSize=300";
        List<Row> rows = new ArrayList<>();
        try {
            load(direct, records);
            // Let the JIT compile client, proxy and server paths before any cell is measured.
            for (String url : List.of(direct, viaProxy, direct, viaProxy)) {
                run("A", url, records, 32, Math.max(2, seconds / 2));
            }
            for (String workload : opts.getOrDefault("workloads", "A,C").split(",")) {
                for (int threads : threadCounts) {
                    Result d = run(workload, direct, records, threads, seconds);
                    Result p = run(workload, viaProxy, records, threads, seconds);
                    Row row = new Row(workload, threads, d, p);
                    rows.add(row);
                    System.out.println(format(row));
                    System.out.println("  cpu us/op direct " + d.cpuMicrosPerOp() + " proxy " + p.cpuMicrosPerOp());
                }
            }
        } finally {
            MongoDbBinding.closeClients();
            proxy.close();
            backend.shutdownNow();
        }
        String table = table(rows, seconds, records);
        System.out.println(table);
        Files.createDirectories(out.getParent());
        Files.writeString(out, table);
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

    private static Result run(String workload, String url, int records, int threads, int seconds) throws Exception {
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
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
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
                    ready.countDown();
                } finally {
                    done.countDown();
                }
            }, "ycsb-" + t);
            th.setDaemon(true);
            th.start();
        }
        ready.await();
        Thread.sleep(Math.min(3000, seconds * 200L));
        recorder.reset();
        CpuShares cpu = CpuShares.start();
        measuring.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        Map<String, Double> cpuPerOp = cpu.perOperation(ops.get());
        long elapsed = System.nanoTime() - t0;
        stop.set(true);
        done.await();
        Histogram h = recorder.getIntervalHistogram();
        return new Result(ops.get() / (elapsed / 1e9), h.getValueAtPercentile(50) / 1000.0,
                h.getValueAtPercentile(95) / 1000.0, h.getValueAtPercentile(99) / 1000.0, errors.get(), cpuPerOp);
    }

    private static String format(Row r) {
        return String.format("| %s | %d | %.0f | %.2f / %.2f / %.2f | %.0f | %.2f / %.2f / %.2f | **%.2f** | %d / %d |",
                r.workload, r.threads, r.direct.opsPerSecond, r.direct.p50Ms, r.direct.p95Ms, r.direct.p99Ms,
                r.proxy.opsPerSecond, r.proxy.p50Ms, r.proxy.p95Ms, r.proxy.p99Ms,
                r.proxy.opsPerSecond / r.direct.opsPerSecond, r.direct.errors, r.proxy.errors);
    }

    private static String table(List<Row> rows, int seconds, int records) {
        StringBuilder s = new StringBuilder();
        s.append("# YCSB through the proxy vs direct\n\n");
        s.append("Generated by `io.thermocline.benchmarks.ycsb.ProxyVsDirectBenchmark` on ").append(LocalDate.now())
                .append(": YCSB 0.17 CoreWorkload, project binding on the Java sync driver, ").append(records)
                .append(" records of 10 x 100 bytes, zipfian, ").append(seconds)
                .append(" s measured per cell after a warm-up. Backend: mongo-java-server (memory) in the same JVM;")
                .append(" proxy pool 64 connections. Client, proxy and server share ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores.\n\n");
        s.append("| workload | threads | direct ops/s | direct p50 / p95 / p99 ms | proxy ops/s | proxy p50 / p95 / p99 ms | proxy/direct | errors d / p |\n");
        s.append("|---|---|---|---|---|---|---|---|\n");
        rows.forEach(r -> s.append(format(r)).append('\n'));
        return s.toString();
    }
}
