package io.thermocline.proxy.bench;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.FeederConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.storage.Storage;
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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * Archive-routed reads through the proxy against the same reads on the archive directly, in the same run
 * (each client alternates the two, in random order), idle and under a write load through the proxy, in the
 * default {@code linearizable} mode; and the feeder's write-to-mirrored lag (acknowledgement of a write to
 * the checkpoint that covers it, seen on a change stream of the checkpoint). Everything in this JVM: the
 * fast tier in memory, the archive on disk (as the embedded default), the feeder with its default config,
 * one proxy. A plain {@code main}, not a test: it lives in the proxy's test sources because the benchmarks
 * module does not build offline (its YCSB and XChart dependencies); see docs/benchmarks/read-barrier.md.
 *
 * <p>Args ({@code key=value}): {@code seconds} per cell (8), {@code warmup} (2), {@code clients} (1,8),
 * {@code writeRates} (0,100,1000), {@code reads} (count,range), {@code documents} (20000), {@code archive} (disk, or memory), {@code writers} (8: threads
 * inserting, each one write at a time), {@code out} (a file for the table).
 */
public final class ColdReadBenchmark {

    static final CollectionPolicy POLICY = new CollectionPolicy("demo", "orders", "createdAt", Duration.ofDays(1));
    static final int CUSTOMERS = 200;

    enum Reads {
        COUNT,
        RANGE
    }

    record Settings(
            int seconds,
            int warmup,
            List<Integer> clients,
            List<Integer> writeRates,
            List<Reads> reads,
            int documents,
            boolean archiveOnDisk,
            int writers,
            Path out) {
        static Settings parse(String[] args) {
            Map<String, String> a = new java.util.HashMap<>();
            for (String arg : args) {
                int eq = arg.indexOf('=');
                a.put(arg.substring(0, eq), arg.substring(eq + 1));
            }
            return new Settings(
                    Integer.parseInt(a.getOrDefault("seconds", "8")),
                    Integer.parseInt(a.getOrDefault("warmup", "2")),
                    ints(a.getOrDefault("clients", "1,8")),
                    ints(a.getOrDefault("writeRates", "0,100,1000")),
                    Arrays.stream(a.getOrDefault("reads", "count,range").split(","))
                            .map(r -> Reads.valueOf(r.toUpperCase(java.util.Locale.ROOT)))
                            .toList(),
                    Integer.parseInt(a.getOrDefault("documents", "20000")),
                    !a.getOrDefault("archive", "disk").equals("memory"),
                    Integer.parseInt(a.getOrDefault("writers", "8")),
                    a.containsKey("out") ? Path.of(a.get("out")) : null);
        }

        private static List<Integer> ints(String list) {
            return Arrays.stream(list.split(",")).map(Integer::parseInt).toList();
        }
    }

    record Cell(
            Reads reads,
            int clients,
            int writeRate,
            double writesPerSecond,
            long[] archive,
            long[] proxy,
            long[] hop,
            ReadBarrier.Counts counts,
            long[] lag,
            double[] phases) {}

    /** The feeder's batch phases (thermocline_feeder_batch_phase_seconds), in the table's order. */
    static final List<String> PHASES = List.of("queued", "archive", "checkpoint");

    private ColdReadBenchmark() {}

    public static void main(String[] args) throws Exception {
        Settings s = Settings.parse(args);
        Path archiveDir = Files.createTempDirectory("cold-read-archive");
        List<Cell> cells = new ArrayList<>();
        PrometheusRegistry feederRegistry = new PrometheusRegistry();
        long started = System.nanoTime();
        try (EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder()
                        .name("fast")
                        .storage(Storage.memory())
                        .build()
                        .start();
                EmbeddedReplicaSet archiveSet = EmbeddedReplicaSet.builder()
                        .name("archive")
                        .storage(s.archiveOnDisk() ? Storage.directory(archiveDir) : Storage.memory())
                        .build()
                        .start();
                MongoClient archiveDirect = MongoClients.create(archiveSet.connectionString() + "&maxPoolSize=64")) {
            var fast = TierClients.client(fastSet.connectionString(), "bench-workers");
            var archive = TierClients.client(archiveSet.connectionString(), "bench-workers");
            new MetadataStore(fast).ensureCollections();
            seedArchive(archiveDirect, s.documents());
            try (Feeder feeder = new Feeder(
                                    fast,
                                    archive,
                                    List.of(POLICY),
                                    FeederConfig.defaults(),
                                    Feeder.Options.defaults().withRegistry(feederRegistry))
                            .start();
                    MongoClient fastDirect = MongoClients.create(fastSet.connectionString())) {
                if (!feeder.awaitStreaming(Duration.ofSeconds(60))) {
                    throw new IllegalStateException("the feeder does not stream");
                }
                try (ProxyServer proxy = ProxyServer.create(ConfigLoader.parse(
                                        config(fastSet, archiveSet, "linearizable", "bench-proxy"), Map.of()))
                                .start();
                        ProxyServer hop = ProxyServer.create(ConfigLoader.parse(
                                        config(fastSet, archiveSet, "session", "bench-hop"), Map.of()))
                                .start();
                        MongoClient viaProxy =
                                MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?maxPoolSize=64");
                        MongoClient viaHop =
                                MongoClients.create("mongodb://127.0.0.1:" + hop.port() + "/?maxPoolSize=64");
                        MongoClient writing =
                                MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?maxPoolSize=64")) {
                    for (int rate : s.writeRates()) {
                        for (int clients : s.clients()) {
                            for (Reads reads : s.reads()) {
                                cells.add(cell(
                                        s,
                                        feederRegistry,
                                        reads,
                                        clients,
                                        rate,
                                        proxy,
                                        viaProxy,
                                        viaHop,
                                        writing,
                                        archiveDirect,
                                        fastDirect));
                            }
                        }
                    }
                }
            } finally {
                fast.close();
                archive.close();
            }
        }
        String table = table(s, cells, (System.nanoTime() - started) / 1e9);
        System.out.println(table);
        if (s.out() != null) {
            Files.writeString(s.out(), table);
        }
    }

    static String config(EmbeddedReplicaSet fastSet, EmbeddedReplicaSet archiveSet, String mode, String instance) {
        return "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n  causalWaitTimeout: 10s\n"
                + "  readConsistency: " + mode + "\n"
                + "tiers:\n  fast:\n    uri: " + fastSet.connectionString() + "\n    connectionBudget: 64\n"
                + "  archive:\n    uri: " + archiveSet.connectionString() + "\n    connectionBudget: 64\n"
                + "fleet:\n  instanceId: " + instance + "\nauth:\n  mode: disabled\n"
                + "collections:\n  - {database: demo, collection: orders, ageField: createdAt, hotWindow: 1d}\n";
    }

    /** Orders of the last 400 days, outside the window, in the archive only, with the indexes a user would have. */
    static void seedArchive(MongoClient archive, int documents) {
        MongoCollection<Document> orders =
                archive.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        List<Document> batch = new ArrayList<>();
        Instant now = Instant.now();
        for (int i = 0; i < documents; i++) {
            batch.add(new Document("_id", "old-" + i)
                    .append("createdAt", Date.from(now.minus(Duration.ofDays(2)).minusSeconds(i * 1700L)))
                    .append("customer", "c" + (i % CUSTOMERS))
                    .append("state", "done")
                    .append("amount", i % 500));
            if (batch.size() == 1000) {
                orders.insertMany(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            orders.insertMany(batch);
        }
        orders.createIndex(Indexes.ascending("customer"));
        orders.createIndex(Indexes.ascending("createdAt"));
    }

    static Cell cell(
            Settings s,
            PrometheusRegistry feederRegistry,
            Reads reads,
            int clients,
            int rate,
            ProxyServer proxy,
            MongoClient viaProxy,
            MongoClient viaHop,
            MongoClient writing,
            MongoClient archiveDirect,
            MongoClient fastDirect)
            throws InterruptedException {
        MongoCollection<Document> proxied =
                viaProxy.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        MongoCollection<Document> written =
                writing.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        MongoCollection<Document> archived =
                archiveDirect.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicLong writes = new AtomicLong();
        ConcurrentLinkedQueue<Long> archiveLatency = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Long> proxyLatency = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Long> hopLatency = new ConcurrentLinkedQueue<>();
        MongoCollection<Document> hopped = viaHop.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        ConcurrentLinkedQueue<Long> lag = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<long[]> unmirrored = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        if (rate > 0) {
            long interval = 1_000_000_000L * s.writers() / rate;
            for (int w = 0; w < s.writers(); w++) {
                int writer = w;
                threads.add(daemon(() -> {
                    try (ClientSession session = writing.startSession(ClientSessionOptions.builder()
                            .causallyConsistent(false)
                            .build())) {
                        long next = System.nanoTime();
                        for (long n = 0; !stop.get(); n++) {
                            written.insertOne(
                                    session,
                                    new Document("_id", reads + "-" + clients + "-" + rate + "-" + writer + "-" + n)
                                            .append("createdAt", new Date())
                                            .append(
                                                    "customer",
                                                    "c"
                                                            + ThreadLocalRandom.current()
                                                                    .nextInt(CUSTOMERS))
                                            .append("state", "new"));
                            long acknowledged = System.nanoTime();
                            BsonTimestamp time = session.getOperationTime();
                            if (measuring.get()) {
                                writes.incrementAndGet();
                                if (time != null) {
                                    unmirrored.add(new long[] {time.getValue(), acknowledged});
                                }
                            }
                            next += interval;
                            LockSupport.parkNanos(next - System.nanoTime());
                        }
                    }
                }));
            }
            threads.add(daemon(() -> watchCheckpoints(fastDirect, stop, unmirrored, lag)));
        }
        for (int c = 0; c < clients; c++) {
            threads.add(daemon(() -> {
                List<Integer> order = new ArrayList<>(List.of(0, 1, 2));
                while (!stop.get()) {
                    java.util.Collections.shuffle(order, ThreadLocalRandom.current());
                    for (int target : order) {
                        long start = System.nanoTime();
                        read(reads, target == 0 ? archived : target == 1 ? proxied : hopped);
                        if (measuring.get()) {
                            (target == 0 ? archiveLatency : target == 1 ? proxyLatency : hopLatency)
                                    .add(System.nanoTime() - start);
                        }
                    }
                }
            }));
        }
        Thread.sleep(s.warmup() * 1000L);
        ReadBarrier.Counts before = proxy.tieredRouting().orElseThrow().readBarrierCounts();
        double[][] phasesBefore = phases(feederRegistry);
        measuring.set(true);
        long start = System.nanoTime();
        Thread.sleep(s.seconds() * 1000L);
        measuring.set(false);
        double elapsed = (System.nanoTime() - start) / 1e9;
        ReadBarrier.Counts after = proxy.tieredRouting().orElseThrow().readBarrierCounts();
        double[][] phasesAfter = phases(feederRegistry);
        double[] phaseMeans = new double[PHASES.size()];
        for (int i = 0; i < phaseMeans.length; i++) {
            double count = phasesAfter[i][1] - phasesBefore[i][1];
            phaseMeans[i] = count == 0 ? Double.NaN : 1000 * (phasesAfter[i][0] - phasesBefore[i][0]) / count;
        }
        Thread.sleep(500); // the last measured writes' checkpoints
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
        Cell cell = new Cell(
                reads,
                clients,
                rate,
                writes.get() / elapsed,
                sorted(archiveLatency),
                sorted(proxyLatency),
                sorted(hopLatency),
                new ReadBarrier.Counts(
                        after.immediate() - before.immediate(),
                        after.probed() - before.probed(),
                        after.waitedForFeeder() - before.waitedForFeeder(),
                        after.timedOut() - before.timedOut(),
                        after.skipped() - before.skipped(),
                        after.quiet() - before.quiet(),
                        after.speculated() - before.speculated(),
                        after.speculationsDropped() - before.speculationsDropped()),
                sorted(lag),
                phaseMeans);
        System.out.println(row(cell));
        return cell;
    }

    private static void read(Reads reads, MongoCollection<Document> orders) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        if (reads == Reads.COUNT) {
            orders.countDocuments(Filters.eq("customer", "c" + random.nextInt(CUSTOMERS)));
        } else {
            Instant from = Instant.now().minus(Duration.ofDays(3 + random.nextInt(300)));
            orders.find(Filters.and(
                            Filters.gte("createdAt", Date.from(from)),
                            Filters.lt("createdAt", Date.from(from.plus(Duration.ofDays(1))))))
                    .into(new ArrayList<>());
        }
    }

    /** Each checkpoint as it commits: every measured write it covers was mirrored that long after its acknowledgement. */
    private static void watchCheckpoints(
            MongoClient fastDirect,
            AtomicBoolean stop,
            ConcurrentLinkedQueue<long[]> unmirrored,
            ConcurrentLinkedQueue<Long> lag) {
        var stream = fastDirect
                .getDatabase(MetadataStore.DATABASE)
                .getCollection(MetadataStore.STATE, BsonDocument.class)
                .watch(List.of(Aggregates.match(Filters.eq("documentKey._id", MetadataStore.FEEDER_ID))))
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .maxAwaitTime(20, java.util.concurrent.TimeUnit.MILLISECONDS);
        List<long[]> waiting = new ArrayList<>();
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = stream.cursor()) {
            while (!stop.get()) {
                ChangeStreamDocument<BsonDocument> event = cursor.tryNext();
                long now = System.nanoTime();
                for (long[] w; (w = unmirrored.poll()) != null; ) {
                    waiting.add(w);
                }
                if (event == null
                        || event.getFullDocument() == null
                        || !event.getFullDocument().isTimestamp("mirroredThrough")) {
                    continue;
                }
                long through =
                        event.getFullDocument().getTimestamp("mirroredThrough").getValue();
                waiting.removeIf(w -> {
                    if (Long.compareUnsigned(w[0], through) <= 0) {
                        lag.add(now - w[1]);
                        return true;
                    }
                    return false;
                });
            }
        }
    }

    /** Per phase, the feeder's histogram {sum in seconds, count} so far. */
    private static double[][] phases(PrometheusRegistry registry) {
        double[][] result = new double[PHASES.size()][2];
        for (var snapshot : registry.scrape()) {
            if (snapshot instanceof io.prometheus.metrics.model.snapshots.HistogramSnapshot histogram
                    && histogram.getMetadata().getPrometheusName().equals("thermocline_feeder_batch_phase_seconds")) {
                for (var point : histogram.getDataPoints()) {
                    int i = PHASES.indexOf(point.getLabels().get("phase"));
                    if (i >= 0) {
                        result[i] = new double[] {point.getSum(), point.getCount()};
                    }
                }
            }
        }
        return result;
    }

    private static long[] sorted(ConcurrentLinkedQueue<Long> values) {
        return values.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    private static double ms(long[] sorted, double percentile) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(percentile / 100 * sorted.length) - 1)] / 1e6;
    }

    static String header() {
        return "| reads | clients | writes/s (target) | archive alone p50 / p99 ms | proxy, linearizable p50 / p99 ms | p50 ratio"
                + " | proxy, no barrier (session) p50 / p99 ms | linearizable reads | speculated | quiet | waited for feeder | probed"
                + " | speculations dropped | feeder lag p50 / p99 ms | feeder batch queued / archive / checkpoint mean ms |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";
    }

    static String row(Cell c) {
        ReadBarrier.Counts k = c.counts();
        double all = Math.max(1, k.speculated() + k.quiet() + k.waitedForFeeder() + k.probed() + k.immediate());
        return String.format(
                "| %s | %d | %.0f (%d) | %.1f / %.1f | %.1f / %.1f | %.2f | %.1f / %.1f | %d | %.0f %% | %.0f %% | %.0f %% | %.0f %% | %d | %s | %s |",
                c.reads().name().toLowerCase(java.util.Locale.ROOT),
                c.clients(),
                c.writesPerSecond(),
                c.writeRate(),
                ms(c.archive(), 50),
                ms(c.archive(), 99),
                ms(c.proxy(), 50),
                ms(c.proxy(), 99),
                ms(c.proxy(), 50) / ms(c.archive(), 50),
                ms(c.hop(), 50),
                ms(c.hop(), 99),
                c.proxy().length,
                100 * k.speculated() / all,
                100 * k.quiet() / all,
                100 * k.waitedForFeeder() / all,
                100 * (k.probed() + k.immediate()) / all,
                k.speculationsDropped(),
                c.lag().length == 0 ? "-" : String.format("%.1f / %.1f", ms(c.lag(), 50), ms(c.lag(), 99)),
                Double.isNaN(c.phases()[0])
                        ? "-"
                        : String.format("%.1f / %.1f / %.1f", c.phases()[0], c.phases()[1], c.phases()[2]));
    }

    static String table(Settings s, List<Cell> cells, double seconds) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                "%d s per cell after %d s warm-up; %d archived orders (archive %s, fast tier in memory); count: one"
                        + " customer's orders; range: one day of orders 3-300 days old; writes: inserts of recent orders through the proxy"
                        + " (%d writer threads) to the linearizable proxy; each client reads the archive, the linearizable proxy and a session-mode proxy (no barrier for a reader that wrote nothing: the proxy hop alone) in random order; %.0f s in all%n%n",
                s.seconds(),
                s.warmup(),
                s.documents(),
                s.archiveOnDisk() ? "on disk" : "in memory",
                s.writers(),
                seconds));
        b.append(header()).append('\n');
        for (Cell c : cells) {
            b.append(row(c)).append('\n');
        }
        return b.toString();
    }

    static Thread daemon(Runnable body) {
        Thread t = new Thread(body);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
