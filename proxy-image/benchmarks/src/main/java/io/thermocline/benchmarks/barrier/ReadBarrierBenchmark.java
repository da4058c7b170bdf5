package io.thermocline.benchmarks.barrier;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ReadConsistency;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.bson.Document;

/**
 * The cost of {@code proxy.readConsistency}: latency of reads the proxy routes to the archive, in
 * {@code session} and {@code linearizable} mode, with a concurrent write load on the fast tier, and
 * how reads passed the read barrier (no wait, a probe only, a wait for the feeder). Everything runs in
 * this JVM: two embedded replica sets, the feeder, the proxy and the clients. Prints a Markdown table;
 * not a test.
 *
 * <p>Run: see docs/benchmarks/read-barrier.md.
 */
public final class ReadBarrierBenchmark {

    static final CollectionPolicy POLICY = new CollectionPolicy("bench", "orders", "createdAt", Duration.ofDays(1));
    public static final int CUSTOMERS = 200;

    private ReadBarrierBenchmark() {
    }

    /** What the readers read: a customer's orders (a count routed to the archive), or one archived order by _id. */
    enum Reads { COUNT, POINT }

    record Settings(int seconds, int warmupSeconds, List<Integer> clients, int writers, int writesPerSecond,
                    List<Duration> feederBatchWaits, Reads reads, Path out) {
        static Settings parse(String[] args) {
            Map<String, String> a = BenchmarkArgs.parse(args);
            return new Settings(Integer.parseInt(a.getOrDefault("seconds", "8")), Integer.parseInt(a.getOrDefault("warmup", "2")),
                    Arrays.stream(a.getOrDefault("clients", "8,64").split(",")).map(Integer::parseInt).toList(),
                    Integer.parseInt(a.getOrDefault("writers", "2")), Integer.parseInt(a.getOrDefault("writeRate", "200")),
                    Arrays.stream(a.getOrDefault("feederBatchWait", "100,10").split(",")).map(ms -> Duration.ofMillis(Long.parseLong(ms))).toList(),
                    Reads.valueOf(a.getOrDefault("reads", "count").toUpperCase(java.util.Locale.ROOT)),
                    a.containsKey("out") ? Path.of(a.get("out")) : null);
        }
    }

    record Cell(Duration batchWait, ReadConsistency mode, int clients, long reads, double readsPerSecond, Histogram latency,
                double writesPerSecond, ReadBarrier.Counts counts) {
    }

    public static void main(String[] args) throws Exception {
        io.thermocline.benchmarks.ModuleClasses.require();
        Settings s = Settings.parse(args);
        List<Cell> cells = new ArrayList<>();
        for (Duration batchWait : s.feederBatchWaits()) {
            cells.addAll(runFeederSetting(s, batchWait));
        }
        String table = table(s, cells);
        System.out.println(table);
        if (s.out() != null) {
            Files.writeString(s.out(), table);
        }
    }

    static List<Cell> runFeederSetting(Settings s, Duration batchWait) throws Exception {
        List<Cell> cells = new ArrayList<>();
        try (EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archiveSet = EmbeddedReplicaSet.builder().name("archive").build().start();
             MongoClient archiveDirect = MongoClients.create(archiveSet.connectionString())) {
            var fast = TierClients.client(fastSet.connectionString(), "bench-workers");
            var archive = TierClients.client(archiveSet.connectionString(), "bench-workers");
            new MetadataStore(fast).ensureCollections();
            seedArchive(archiveDirect);
            try (Feeder feeder = new Feeder(fast, archive, List.of(POLICY), new FeederConfig(1000, batchWait, true),
                    Feeder.Options.defaults().withRegistry(new PrometheusRegistry())).start()) {
                feeder.awaitStreaming(Duration.ofSeconds(30));
                for (ReadConsistency mode : List.of(ReadConsistency.SESSION, ReadConsistency.LINEARIZABLE)) {
                    // writers and readers are separate driver clients: a reader never saw a write (in session mode it waits for none)
                    try (ProxyServer proxy = ProxyServer.create(config(fastSet, archiveSet, mode)).start();
                         MongoClient writing = MongoClients.create("mongodb://127.0.0.1:" + proxy.port());
                         MongoClient reading = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?maxPoolSize=200")) {
                        for (int clients : s.clients()) {
                            cells.add(cell(s, batchWait, mode, clients, proxy, writing, reading));
                        }
                    }
                }
            } finally {
                fast.close();
                archive.close();
            }
        }
        return cells;
    }

    public static final int ARCHIVED = 2000;

    /** Archived orders of a month ago (outside the window), {@code bench.orders}, spread over the customers. */
    public static void seedArchive(MongoClient archive) {
        List<Document> old = new ArrayList<>();
        Instant monthAgo = Instant.now().minus(Duration.ofDays(30));
        for (int i = 0; i < ARCHIVED; i++) {
            old.add(new Document("_id", "old-" + i).append("createdAt", Date.from(monthAgo.minusSeconds(i)))
                    .append("customer", "c" + (i % CUSTOMERS)).append("state", "done"));
        }
        archive.getDatabase(POLICY.database()).getCollection(POLICY.collection()).insertMany(old);
    }

    static ThermoclineConfig config(EmbeddedReplicaSet fastSet, EmbeddedReplicaSet archiveSet, ReadConsistency mode) {
        return ConfigLoader.parse("proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "  readConsistency: " + mode.configName() + "\n  causalWaitTimeout: 10s\n"
                + "tiers:\n  fast:\n    uri: " + fastSet.connectionString() + "\n    connectionBudget: 64\n"
                + "  archive:\n    uri: " + archiveSet.connectionString() + "\n    connectionBudget: 64\n"
                + "fleet:\n  instanceId: bench-proxy\n"
                + "auth:\n  mode: disabled\n"
                + "collections:\n  - {database: bench, collection: orders, ageField: createdAt, hotWindow: 1d}\n", Map.of());
    }

    /**
     * One cell: writers insert and update recent orders at a fixed rate; readers count a customer's orders (archive-routed), or
     * read one archived order by {@code _id} (outside the window, so never promoted: a fast-tier miss, then the archive).
     */
    static Cell cell(Settings s, Duration batchWait, ReadConsistency mode, int clients, ProxyServer proxy, MongoClient writing,
                     MongoClient reading) throws InterruptedException {
        MongoCollection<Document> orders = writing.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        MongoCollection<Document> readOrders = reading.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicLong writes = new AtomicLong();
        Recorder recorder = new Recorder(3);
        List<Thread> threads = new ArrayList<>();
        long writeIntervalNanos = 1_000_000_000L * s.writers() / Math.max(1, s.writesPerSecond());
        for (int w = 0; w < s.writers(); w++) {
            int writer = w;
            threads.add(daemon(() -> {
                long next = System.nanoTime();
                for (long n = 0; !stop.get(); n++) {
                    String id = mode.configName() + "-" + clients + "-" + writer + "-" + n;
                    orders.insertOne(new Document("_id", id).append("createdAt", new Date())
                            .append("customer", "c" + ThreadLocalRandom.current().nextInt(CUSTOMERS)).append("state", "new"));
                    orders.updateOne(Filters.eq("_id", id), Updates.set("state", "paid"));
                    if (measuring.get()) {
                        writes.addAndGet(2);
                    }
                    next += writeIntervalNanos;
                    LockSupport.parkNanos(next - System.nanoTime());
                }
            }));
        }
        for (int r = 0; r < clients; r++) {
            threads.add(daemon(() -> {
                while (!stop.get()) {
                    long start = System.nanoTime();
                    if (s.reads() == Reads.POINT) {
                        readOrders.find(Filters.eq("_id", "old-" + ThreadLocalRandom.current().nextInt(ARCHIVED))).first();
                    } else {
                        readOrders.countDocuments(Filters.eq("customer", "c" + ThreadLocalRandom.current().nextInt(CUSTOMERS)));
                    }
                    if (measuring.get()) {
                        recorder.recordValue((System.nanoTime() - start) / 1000);
                    }
                }
            }));
        }
        Thread.sleep(s.warmupSeconds() * 1000L);
        ReadBarrier.Counts before = proxy.tieredRouting().orElseThrow().readBarrierCounts();
        recorder.reset();
        measuring.set(true);
        long start = System.nanoTime();
        Thread.sleep(s.seconds() * 1000L);
        measuring.set(false);
        double elapsed = (System.nanoTime() - start) / 1e9;
        Histogram latency = recorder.getIntervalHistogram();
        ReadBarrier.Counts after = proxy.tieredRouting().orElseThrow().readBarrierCounts();
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
        ReadBarrier.Counts delta = new ReadBarrier.Counts(after.immediate() - before.immediate(), after.probed() - before.probed(),
                after.waitedForFeeder() - before.waitedForFeeder(), after.timedOut() - before.timedOut(), after.skipped() - before.skipped(),
                after.quiet() - before.quiet(), after.speculated() - before.speculated(),
                after.speculationsDropped() - before.speculationsDropped());
        Cell cell = new Cell(batchWait, mode, clients, latency.getTotalCount(), latency.getTotalCount() / elapsed, latency,
                writes.get() / elapsed, delta);
        System.out.printf("feederBatchWait=%d ms mode=%s clients=%d reads/s=%.0f p50=%.1f ms p99=%.1f ms%n", batchWait.toMillis(),
                mode.configName(), clients, cell.readsPerSecond(), latency.getValueAtPercentile(50) / 1000.0,
                latency.getValueAtPercentile(99) / 1000.0);
        return cell;
    }

    static Thread daemon(Runnable body) {
        Thread t = new Thread(body);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static String table(Settings s, List<Cell> cells) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("%d s per cell after %d s warm-up; %d writer threads at %d inserts+updates/s in total; readers"
                + " %s; feeder batch 1000%n%n", s.seconds(), s.warmupSeconds(), s.writers(), s.writesPerSecond(),
                s.reads() == Reads.POINT ? "read one archived order by _id (a fast-tier miss, archive-routed)"
                        : "count one customer's orders (archive-routed)"));
        b.append("| feeder batch wait | mode | clients | reads/s | read p50 ms | read p99 ms | writes/s | no wait | probe only | waited for feeder | skipped | timed out |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Cell c : cells) {
            ReadBarrier.Counts k = c.counts();
            double all = Math.max(1, k.immediate() + k.probed() + k.waitedForFeeder() + k.skipped());
            b.append(String.format("| %d ms | %s | %d | %.0f | %.1f | %.1f | %.0f | %.0f %% | %.0f %% | %.0f %% | %.0f %% | %d |%n", c.batchWait().toMillis(),
                    c.mode().configName(), c.clients(), c.readsPerSecond(), c.latency().getValueAtPercentile(50) / 1000.0,
                    c.latency().getValueAtPercentile(99) / 1000.0, c.writesPerSecond(), 100 * k.immediate() / all,
                    100 * k.probed() / all, 100 * k.waitedForFeeder() / all, 100 * k.skipped() / all, k.timedOut()));
        }
        return b.toString();
    }
}
