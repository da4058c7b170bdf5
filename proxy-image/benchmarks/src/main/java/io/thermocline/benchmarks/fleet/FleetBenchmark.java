package io.thermocline.benchmarks.fleet;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.benchmarks.GeneratedSection;
import io.thermocline.benchmarks.ycsb.ChildProcess;
import io.thermocline.benchmarks.ycsb.WireServerMain;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.bson.Document;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fleet of 1, 2 and 4 linked proxy processes ({@code thermocline proxy}, peers by a static list,
 * one shared secret) in front of one MongoDB wire server, clients spread over the replicas as a
 * client-side list (thread i uses replica i mod n), at 8-256 client threads: point reads by _id and
 * finds whose getMore goes to another replica than the find (the forward's cost). Prints a Markdown
 * table and writes it to docs/benchmarks/fleet.md between its generated markers (the text around
 * them, such as the scaling model, stays). Not a test: nothing asserts timings.
 *
 * <p>{@code mvn -q -Pbench -DskipTests -pl proxy-image/benchmarks -am verify
 * -Dbench.main=io.thermocline.benchmarks.fleet.FleetBenchmark -Dbench.args="seconds=5"}
 */
public final class FleetBenchmark {
    private static final int RECORDS = 10_000;

    private record Cell(String op, int proxies, int threads, double opsPerSecond, double p50Ms, double p99Ms,
                        double proxyCpuMicrosPerOp, long errors) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchmarkArgs.parse(args);
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "5"));
        List<Integer> fleets = parse(opts.getOrDefault("proxies", "1,2,4"));
        List<Integer> threadCounts = parse(opts.getOrDefault("threads", "8,32,128,256"));
        Path out = Path.of(opts.getOrDefault("out", "docs/benchmarks/fleet.md"));
        Path logs = Files.createTempDirectory("thermocline-fleet-bench");
        Path secret = logs.resolve("peer-secret");
        Files.writeString(secret, "benchmark-fleet-secret-0123456789abcdef\n");
        int serverPort = ChildProcess.freePort();
        List<Cell> cells = new ArrayList<>();
        try (ChildProcess server = ChildProcess.java("server", List.of("-Xmx2g"), WireServerMain.class.getName(),
                List.of(Integer.toString(serverPort)), serverPort, logs.resolve("server.log"))) {
            String serverUri = "mongodb://127.0.0.1:" + serverPort;
            try (MongoClient c = MongoClients.create(serverUri)) {
                MongoCollection<Document> coll = c.getDatabase("bench").getCollection("items");
                List<Document> batch = new ArrayList<>();
                for (int i = 0; i < RECORDS; i++) {
                    batch.add(new Document("_id", i).append("payload", "x".repeat(200)));
                }
                coll.insertMany(batch);
            }
            for (int n : fleets) {
                List<ChildProcess> proxies = new ArrayList<>();
                List<Integer> ports = new ArrayList<>();
                try {
                    startFleet(n, serverUri, secret, logs, proxies, ports);
                    List<MongoClient> clients = ports.stream()
                            .map(p -> MongoClients.create("mongodb://127.0.0.1:" + p + "/?maxPoolSize=300")).toList();
                    try {
                        run("find", clients, 32, 3, proxies); // warm-up: JIT, pools
                        run("crossing getMore", clients, 8, 2, proxies);
                        for (int threads : threadCounts) {
                            for (String op : List.of("find", "crossing getMore")) {
                                Cell cell = run(op, clients, threads, seconds, proxies);
                                cells.add(cell);
                                System.out.println(row(cell));
                            }
                        }
                    } finally {
                        clients.forEach(MongoClient::close);
                    }
                } finally {
                    for (ChildProcess p : proxies) {
                        p.close();
                    }
                }
            }
        }
        String table = table(cells, seconds);
        System.out.println(table);
        new GeneratedSection("FleetBenchmark").write(out, "Proxy fleet: 1, 2 and 4 linked replicas", table);
    }

    private static void startFleet(int n, String serverUri, Path secret, Path logs, List<ChildProcess> proxies,
                                   List<Integer> ports) throws Exception {
        List<Integer> peerPorts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ports.add(ChildProcess.freePort());
            peerPorts.add(ChildProcess.freePort());
        }
        StringBuilder peers = new StringBuilder();
        peerPorts.forEach(p -> peers.append(peers.length() == 0 ? "" : ", ").append("'127.0.0.1:").append(p).append("'"));
        for (int i = 0; i < n; i++) {
            Path config = logs.resolve("proxy-" + n + "-" + i + ".yaml");
            Files.writeString(config, "proxy: {listenHost: 127.0.0.1, port: " + ports.get(i) + ", httpHost: 127.0.0.1, httpPort: 0}\n"
                    + "tiers: {archive: {uri: '" + serverUri + "', connectionBudget: 64}}\n"
                    + "fleet: {instanceId: bench-" + i + ", peerPort: " + peerPorts.get(i) + ", peers: [" + peers + "], secretFile: '"
                    + secret + "'}\n"
                    + "auth: {mode: disabled}\n");
            proxies.add(ChildProcess.java("proxy-" + i, List.of("-Xmx512m"), "io.thermocline.app.Thermocline",
                    List.of("proxy", "--config=" + config), ports.get(i), logs.resolve("proxy-" + n + "-" + i + ".log")));
        }
        Thread.sleep(2_000); // the replicas find each other and divide the budget
    }

    /**
     * {@code find}: a point read by _id on the thread's replica. {@code crossing getMore}: a find of 20
     * documents in batches of 10 on the thread's replica, its getMore on the next replica (forwarded to
     * the owner); with one replica both go to it. Latency is per operation (one find, or find + getMore).
     */
    private static Cell run(String op, List<MongoClient> clients, int threads, int seconds, List<ChildProcess> proxies)
            throws Exception {
        Recorder recorder = new Recorder(3);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        int n = clients.size();
        for (int t = 0; t < threads; t++) {
            MongoDatabase mine = clients.get(t % n).getDatabase("bench");
            MongoDatabase theirs = clients.get((t + 1) % n).getDatabase("bench");
            Thread th = new Thread(() -> {
                while (!stop.get()) {
                    long start = System.nanoTime();
                    try {
                        int key = ThreadLocalRandom.current().nextInt(RECORDS - 20);
                        if (op.equals("find")) {
                            mine.getCollection("items").find(Filters.eq("_id", key)).first();
                        } else {
                            crossingGetMore(mine, theirs, key);
                        }
                    } catch (RuntimeException e) {
                        if (measuring.get()) {
                            errors.incrementAndGet();
                        }
                    }
                    if (measuring.get()) {
                        recorder.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                        ops.incrementAndGet();
                    }
                }
            }, "fleet-bench-" + t);
            th.setDaemon(true);
            th.start();
            workers.add(th);
        }
        Thread.sleep(500);
        recorder.reset();
        long cpu0 = proxyCpu(proxies);
        measuring.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long elapsed = System.nanoTime() - t0;
        long cpu = proxyCpu(proxies) - cpu0;
        stop.set(true);
        for (Thread th : workers) {
            th.join(10_000);
        }
        Histogram h = recorder.getIntervalHistogram();
        long done = ops.get();
        return new Cell(op, n, threads, done * 1e9 / elapsed, h.getValueAtPercentile(50) / 1000.0,
                h.getValueAtPercentile(99) / 1000.0, done == 0 ? 0 : cpu / 1000.0 / done, errors.get());
    }

    /** A find on one replica and its getMore on another, as commands (the driver would keep both on one). */
    private static void crossingGetMore(MongoDatabase mine, MongoDatabase theirs, int key) {
        List<Integer> ids = java.util.stream.IntStream.range(key, key + 20).boxed().toList();
        Document reply = mine.runCommand(new Document("find", "items")
                .append("filter", new Document("_id", new Document("$in", ids))).append("batchSize", 10));
        long id = reply.get("cursor", Document.class).getLong("id");
        if (id != 0) {
            theirs.runCommand(new Document("getMore", id).append("collection", "items").append("batchSize", 10));
        }
    }

    private static long proxyCpu(List<ChildProcess> proxies) {
        return proxies.stream().mapToLong(p -> p.cpu().toNanos()).sum();
    }

    private static List<Integer> parse(String list) {
        return java.util.Arrays.stream(list.split(",")).map(String::trim).map(Integer::parseInt).toList();
    }

    private static String row(Cell c) {
        return String.format("| %s | %d | %d | %.0f | %.2f | %.2f | %.0f | %d |", c.op(), c.proxies(), c.threads(),
                c.opsPerSecond(), c.p50Ms(), c.p99Ms(), c.proxyCpuMicrosPerOp(), c.errors());
    }

    private static String table(List<Cell> cells, int seconds) {
        StringBuilder s = new StringBuilder("`FleetBenchmark`, ");
        s.append(seconds).append(" s per cell, ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores shared by the clients, the server and every proxy")
                .append(" process (JVM ").append(ManagementFactory.getRuntimeMXBean().getVmVersion()).append("). Archive budget 64")
                .append(" per member for the fleet. CPU is the proxies' processes together, per operation.\n\n")
                .append("| operation | proxies | client threads | ops/s | p50 ms | p99 ms | proxy CPU us/op | errors |\n")
                .append("|---|---|---|---|---|---|---|---|\n");
        cells.forEach(c -> s.append(row(c)).append('\n'));
        return s.toString();
    }
}
