package io.thermocline.benchmarks.secondaries;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.benchmarks.barrier.ReadBarrierBenchmark;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.HdrHistogram.Histogram;
import org.bson.Document;

/**
 * Archive-routed reads with {@code secondaryReads: offload} on and off, on a three-member archive: read
 * ops/s, p50 and p99, and the share the secondaries served. Everything runs in this JVM (two embedded
 * replica sets, the feeder, one proxy per setting, the clients). Prints a Markdown table; not a test.
 *
 * <p>The embedded archive keeps its data in memory, so this measures the proxy's path (barrier, archive
 * present, choice of member), not the disk offloading a real disk-bound archive gains.
 * Run: {@code mvn -q -Pbench -DskipTests -pl proxy-image/benchmarks -am verify
 * -Dbench.main=io.thermocline.benchmarks.secondaries.SecondaryReadsBenchmark -Dbench.args="seconds=8 clients=8,32"}
 */
public final class SecondaryReadsBenchmark {

    private SecondaryReadsBenchmark() {
    }

    record Settings(int seconds, int warmupSeconds, List<Integer> clients, Path out) {
        static Settings parse(String[] args) {
            Map<String, String> a = BenchmarkArgs.parse(args);
            return new Settings(Integer.parseInt(a.getOrDefault("seconds", "8")), Integer.parseInt(a.getOrDefault("warmup", "2")),
                    Arrays.stream(a.getOrDefault("clients", "8,32").split(",")).map(Integer::parseInt).toList(),
                    a.containsKey("out") ? Path.of(a.get("out")) : null);
        }
    }

    record Cell(String policy, int clients, double readsPerSecond, Histogram latency, double secondaryShare) {
    }

    public static void main(String[] args) throws Exception {
        io.thermocline.benchmarks.ModuleClasses.require();
        Settings s = Settings.parse(args);
        List<Cell> cells = new ArrayList<>();
        try (EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archiveSet = EmbeddedReplicaSet.builder().name("archive").members(3).build().start();
             MongoClient archiveDirect = MongoClients.create(archiveSet.connectionString())) {
            var fast = TierClients.client(fastSet.connectionString(), "bench-workers");
            var archive = TierClients.client(archiveSet.connectionString(), "bench-workers");
            new MetadataStore(fast).ensureCollections();
            ReadBarrierBenchmark.seedArchive(archiveDirect);
            archiveSet.awaitReplication(Duration.ofSeconds(30));
            ThermoclineConfig base = config(fastSet, archiveSet, "primary");
            try (Feeder feeder = new Feeder(fast, archive, base.collections(), new FeederConfig(1000, Duration.ofMillis(10), true),
                    Feeder.Options.defaults().withRegistry(new PrometheusRegistry())).start()) {
                feeder.awaitStreaming(Duration.ofSeconds(30));
                for (String policy : List.of("primary", "offload")) {
                    try (ProxyServer proxy = ProxyServer.create(config(fastSet, archiveSet, policy)).start();
                         MongoClient reading = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?maxPoolSize=300")) {
                        for (int clients : s.clients()) {
                            cells.add(cell(s, policy, clients, proxy, reading));
                        }
                    }
                }
            } finally {
                fast.close();
                archive.close();
            }
        }
        String table = table(s, cells);
        System.out.println(table);
        if (s.out() != null) {
            Files.writeString(s.out(), table);
        }
    }

    static ThermoclineConfig config(EmbeddedReplicaSet fastSet, EmbeddedReplicaSet archiveSet, String secondaryReads) {
        return config(fastSet.connectionString(), archiveSet.connectionString(), "orders", secondaryReads);
    }

    /** The proxy in front of both tiers, with {@code bench.<collection>} tiered by {@code createdAt} (1-day window). */
    static ThermoclineConfig config(String fastUri, String archiveUri, String collection, String secondaryReads) {
        return ConfigLoader.parse("proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "  causalWaitTimeout: 10s\n"
                + "tiers:\n  fast:\n    uri: '" + fastUri + "'\n    connectionBudget: 64\n"
                + "  archive:\n    uri: '" + archiveUri + "'\n    connectionBudget: 96\n"
                + "fleet:\n  instanceId: bench-proxy\n"
                + "auth:\n  mode: disabled\n"
                + "collections:\n  - {database: bench, collection: " + collection + ", ageField: createdAt, hotWindow: 1d,"
                + " secondaryReads: " + secondaryReads + "}\n", Map.of());
    }

    /** One cell: {@code clients} readers count a customer's orders (archive-routed, linearizable) as fast as they can. */
    static Cell cell(Settings s, String policy, int clients, ProxyServer proxy, MongoClient reading) throws Exception {
        MongoCollection<Document> orders = reading.getDatabase("bench").getCollection("orders");
        double[][] served = new double[2][];
        ReadLoad.Result r = ReadLoad.run(clients, s.warmupSeconds(), s.seconds(),
                () -> orders.countDocuments(Filters.eq("customer", "c" + ThreadLocalRandom.current().nextInt(ReadBarrierBenchmark.CUSTOMERS))),
                () -> served[0] = served(proxy), () -> served[1] = served(proxy));
        return new Cell(policy, clients, r.opsPerSecond(), r.latency(), secondaryShare(served[0], served[1]));
    }

    /** The share of the reads allowed on secondaries that secondaries served between two {@link #served} snapshots. */
    static double secondaryShare(double[] before, double[] after) {
        double secondary = after[1] - before[1];
        double all = secondary + after[0] - before[0];
        return all == 0 ? 0 : secondary / all;
    }

    /** Archive reads allowed on secondaries so far: {primary, secondary} (none when offloading is off). */
    static double[] served(ProxyServer proxy) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        proxy.metrics().writeTo(out);
        double[] counts = new double[2];
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("thermocline_proxy_secondary_read_choices_total{") && line.contains("tier=\"archive\"")) {
                counts[line.contains("member=\"secondary\"") ? 1 : 0] += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return counts;
    }

    static String table(Settings s, List<Cell> cells) {
        StringBuilder b = new StringBuilder("| secondaryReads | clients | archive reads/s | p50 ms | p99 ms | served by secondaries |\n"
                + "|---|---|---|---|---|---|\n");
        for (Cell c : cells) {
            b.append(String.format("| %s | %d | %.0f | %.1f | %.1f | %.0f %% |%n", c.policy(), c.clients(), c.readsPerSecond(),
                    c.latency().getValueAtPercentile(50) / 1000.0, c.latency().getValueAtPercentile(99) / 1000.0,
                    100 * c.secondaryShare()));
        }
        b.append(String.format("%n%d s per cell after %d s warm-up; three-member embedded archive (in memory), %d archived orders,"
                + " count by customer (archive-routed, linearizable).%n", s.seconds(), s.warmupSeconds(), ReadBarrierBenchmark.ARCHIVED));
        return b.toString();
    }
}
