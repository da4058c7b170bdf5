package io.thermocline.benchmarks.shadow;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.Mode;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.mode.ShadowEvidence;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.HdrHistogram.Histogram;
import org.bson.Document;

/**
 * Shadow mode's added client latency: the same covered reads through the proxy in phase {@code Drained}
 * (archive-authoritative pass-through, no comparison) and in {@code Shadowing} with every read sampled
 * ({@code shadow.sampleRate: 1}), so the only difference is the sampling and the queued comparison. Two
 * embedded replica sets, the proxy, feeder, follower and warmer in this JVM. Prints a Markdown table; not a test.
 *
 * <p>Run: {@code mvn -q -ntp -Pbench -DskipTests -pl proxy-image/benchmarks -am verify
 * -Dbench.main=io.thermocline.benchmarks.shadow.ShadowLatencyBenchmark -Dbench.args="10 4"}
 * (arguments: seconds per phase, client threads).
 */
public final class ShadowLatencyBenchmark {

    private ShadowLatencyBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        try (EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().name("archive").build().start();
             MongoClient archiveClient = MongoClients.create(archive.connectionString())) {
            Instant now = Instant.now();
            List<Document> docs = new ArrayList<>();
            for (int id = 0; id < 2000; id++) {
                docs.add(new Document("_id", id).append("createdAt", Date.from(now.minusSeconds(id))).append("customer", id % 100));
            }
            archiveClient.getDatabase("bench").getCollection("orders").insertMany(docs);
            ThermoclineConfig config = ConfigLoader.parse("proxy: {listenHost: 127.0.0.1, port: 0, httpHost: 127.0.0.1, httpPort: 0}\n"
                    + "tiers:\n  archive: {uri: '" + archive.connectionString() + "'}\n  fast: {uri: '" + fast.connectionString() + "'}\n"
                    + "auth: {mode: disabled}\nshadow: {sampleRate: 1, queueCapacity: 1000}\n"
                    + "collections:\n  - {database: bench, collection: orders, ageField: createdAt, hotWindow: 1d}\n", Map.of());
            try (ProxyServer proxy = ProxyServer.create(config).start();
                 Feeder feeder = Feeder.start(config, Feeder.Options.defaults().withRegistry(new PrometheusRegistry()));
                 Warmer warmer = Warmer.start(config, Warmer.Options.defaults().withRegistry(new PrometheusRegistry()));
                 TierClients workers = TierClients.open(config, "bench-follower");
                 MongoClient followed = MongoClients.create(archive.connectionString());
                 ArchiveFollower follower = new ArchiveFollower(workers.fast(), followed, config.collections(), "bench",
                         Duration.ofMillis(50)).start();
                 MongoClient app = MongoClients.create("mongodb://127.0.0.1:" + proxy.port())) {
                feeder.awaitStreaming(Duration.ofSeconds(30));
                ModeStore modes = new ModeStore(new MetadataStore(workers.fast()));
                MongoCollection<Document> orders = app.getDatabase("bench").getCollection("orders");
                System.out.println("| phase | threads | reads | mean ms | p50 ms | p99 ms | p99.9 ms |");
                System.out.println("|---|---|---|---|---|---|---|");
                modes.request(Mode.DRAINING, false, "bench");
                await(modes, Phase.DRAINED);
                measure(orders, now, seconds, threads); // warm-up (JIT, warmer)
                // alternating, twice, so neither phase gets the quieter machine
                for (int round = 0; round < 2; round++) {
                    modes.request(Mode.DRAINING, false, "bench");
                    await(modes, Phase.DRAINED);
                    row("Drained (pass-through)", threads, measure(orders, now, seconds, threads));
                    modes.request(Mode.SHADOW, false, "bench");
                    await(modes, Phase.SHADOWING);
                    row("Shadowing, sampleRate 1", threads, measure(orders, now, seconds, threads));
                }
                Thread.sleep(2000);
                for (ShadowEvidence e : modes.evidence()) {
                    System.out.printf("%nshadow evidence %s: reads %d, wouldServe %d, compared %d, agreed %d, diverged %d, skipped %d%n",
                            e.namespace(), e.reads(), e.wouldServe(), e.compared(), e.agreed(), e.diverged(), e.skipped());
                }
            }
        }
    }

    private static Histogram measure(MongoCollection<Document> orders, Instant now, int seconds, int threads) throws InterruptedException {
        Histogram all = new Histogram(60_000_000_000L, 3);
        List<Thread> workers = new ArrayList<>();
        List<Histogram> each = new ArrayList<>();
        long until = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        for (int t = 0; t < threads; t++) {
            Histogram h = new Histogram(60_000_000_000L, 3);
            each.add(h);
            Thread thread = new Thread(() -> {
                while (System.nanoTime() < until) {
                    int customer = ThreadLocalRandom.current().nextInt(100);
                    long start = System.nanoTime();
                    orders.find(Filters.and(Filters.gte("createdAt", Date.from(now.minusSeconds(600))), Filters.eq("customer", customer)))
                            .into(new ArrayList<>());
                    h.recordValue(System.nanoTime() - start);
                }
            });
            thread.start();
            workers.add(thread);
        }
        for (Thread t : workers) {
            t.join();
        }
        each.forEach(all::add);
        return all;
    }

    private static void row(String phase, int threads, Histogram h) {
        System.out.printf("| %s | %d | %d | %.2f | %.2f | %.2f | %.2f |%n", phase, threads, h.getTotalCount(), h.getMean() / 1e6,
                h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, h.getValueAtPercentile(99.9) / 1e6);
    }

    private static void await(ModeStore modes, Phase phase) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (modes.read().phase() != phase) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not " + phase + ": " + modes.read().toBson().toJson());
            }
            Thread.sleep(50);
        }
        Thread.sleep(1000); // every proxy acts on it
    }
}
