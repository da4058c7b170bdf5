package io.thermocline.benchmarks.dump;

import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.bson.RawBsonDocument;
import org.bson.Document;

/**
 * A dump through the proxy (what a user without archive access does: a full-collection {@code find}, a
 * {@code $natural} scan, large {@code getMore} batches) against the same reads on the archive directly. Everything
 * in this JVM: two embedded replica sets, the feeder, the proxy, the client. Prints a Markdown table; not a test.
 *
 * <p>Run: see docs/benchmarks/dump.md.
 */
public final class DumpBenchmark {

    static final CollectionPolicy POLICY = new CollectionPolicy("bench", "orders", "createdAt", Duration.ofDays(1));

    private DumpBenchmark() {
    }

    record Variant(String name, Integer batchSize, boolean natural) {
    }

    record Result(Variant variant, String path, long documents, long bytes, double seconds) {
        double docsPerSecond() {
            return documents / seconds;
        }

        double megabytesPerSecond() {
            return bytes / seconds / 1e6;
        }
    }

    public static void main(String[] args) throws Exception {
        io.thermocline.benchmarks.ModuleClasses.require();
        Map<String, String> a = BenchmarkArgs.parse(args);
        int documents = Integer.parseInt(a.getOrDefault("documents", "100000"));
        int rounds = Integer.parseInt(a.getOrDefault("rounds", "3"));
        int padding = Integer.parseInt(a.getOrDefault("padding", "400"));
        Map<String, Variant> known = Map.of("plain", new Variant("find {} (driver batches)", null, false),
                "batch", new Variant("find {} batchSize 10000", 10_000, false),
                "natural", new Variant("find {} hint $natural, batchSize 10000", 10_000, true));
        List<Variant> variants = java.util.Arrays.stream(a.getOrDefault("variants", "plain,batch,natural").split(",")).map(known::get).toList();
        List<Result> results = new ArrayList<>();
        try (EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archiveSet = EmbeddedReplicaSet.builder().name("archive").build().start();
             MongoClient archiveDirect = MongoClients.create(archiveSet.connectionString())) {
            seed(archiveDirect, documents, padding);
            var fast = TierClients.client(fastSet.connectionString(), "bench-workers");
            var archive = TierClients.client(archiveSet.connectionString(), "bench-workers");
            new MetadataStore(fast).ensureCollections();
            try (Feeder feeder = new Feeder(fast, archive, List.of(POLICY), new FeederConfig(1000, Duration.ofMillis(10), true),
                    Feeder.Options.defaults().withRegistry(new PrometheusRegistry())).start();
                 ProxyServer proxy = ProxyServer.create(config(fastSet, archiveSet)).start();
                 MongoClient viaProxy = MongoClients.create("mongodb://127.0.0.1:" + proxy.port())) {
                feeder.awaitStreaming(Duration.ofSeconds(30));
                for (Variant v : variants) {
                    dump(archiveDirect, v); // warm-up of both paths
                    dump(viaProxy, v);
                    for (int r = 0; r < rounds; r++) {
                        results.add(measure(archiveDirect, v, "archive directly"));
                        results.add(measure(viaProxy, v, "through the proxy"));
                    }
                }
            } finally {
                fast.close();
                archive.close();
            }
        }
        String table = table(results, documents, rounds);
        System.out.println(table);
        if (a.containsKey("out")) {
            Files.writeString(Path.of(a.get("out")), table);
        }
    }

    /** Archived orders of a month ago (outside the window: the archive answers them through the proxy). */
    static void seed(MongoClient archive, int documents, int padding) {
        MongoCollection<Document> orders = archive.getDatabase(POLICY.database()).getCollection(POLICY.collection());
        Instant monthAgo = Instant.now().minus(Duration.ofDays(30));
        String pad = "x".repeat(padding);
        List<Document> batch = new ArrayList<>();
        for (int i = 0; i < documents; i++) {
            batch.add(new Document("_id", i).append("createdAt", Date.from(monthAgo.minusSeconds(i))).append("customer", "c" + (i % 500))
                    .append("total", i * 1.5).append("note", pad));
            if (batch.size() == 5000) {
                orders.insertMany(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            orders.insertMany(batch);
        }
    }

    static Result measure(MongoClient client, Variant v, String path) {
        long start = System.nanoTime();
        long[] counted = dump(client, v);
        return new Result(v, path, counted[0], counted[1], (System.nanoTime() - start) / 1e9);
    }

    /** Reads every document as raw BSON (as mongodump does: no decoding); returns documents and bytes. */
    static long[] dump(MongoClient client, Variant v) {
        FindIterable<RawBsonDocument> find = client.getDatabase(POLICY.database()).getCollection(POLICY.collection(), RawBsonDocument.class).find();
        if (v.batchSize() != null) {
            find = find.batchSize(v.batchSize());
        }
        if (v.natural()) {
            find = find.hint(new Document("$natural", 1));
        }
        long docs = 0;
        long bytes = 0;
        try (MongoCursor<RawBsonDocument> cursor = find.iterator()) {
            while (cursor.hasNext()) {
                bytes += cursor.next().getByteBuffer().remaining();
                docs++;
            }
        }
        return new long[] {docs, bytes};
    }

    static ThermoclineConfig config(EmbeddedReplicaSet fastSet, EmbeddedReplicaSet archiveSet) {
        return ConfigLoader.parse("proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "tiers:\n  fast:\n    uri: " + fastSet.connectionString() + "\n"
                + "  archive:\n    uri: " + archiveSet.connectionString() + "\n"
                + "fleet:\n  instanceId: bench-proxy\n"
                + "auth:\n  mode: disabled\n"
                + "collections:\n  - {database: bench, collection: orders, ageField: createdAt, hotWindow: 1d}\n", Map.of());
    }

    static String table(List<Result> results, int documents, int rounds) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("%d documents, best and median of %d rounds per cell%n%n", documents, rounds));
        b.append("| read | path | docs/s (best) | MB/s (best) | docs/s (median) | proxy / direct (best) |\n|---|---|---|---|---|---|\n");
        for (Result first : results) {
            if (!results.stream().filter(r -> r.variant().equals(first.variant()) && r.path().equals(first.path())).findFirst().orElseThrow().equals(first)) {
                continue;
            }
            List<Result> cell = results.stream().filter(r -> r.variant().equals(first.variant()) && r.path().equals(first.path()))
                    .sorted((x, y) -> Double.compare(y.docsPerSecond(), x.docsPerSecond())).toList();
            Result best = cell.get(0);
            Result median = cell.get(cell.size() / 2);
            double direct = results.stream().filter(r -> r.variant().equals(first.variant()) && r.path().equals("archive directly"))
                    .mapToDouble(Result::docsPerSecond).max().orElse(Double.NaN);
            b.append(String.format("| %s | %s | %,.0f | %.1f | %,.0f | %s |%n", first.variant().name(), first.path(), best.docsPerSecond(),
                    best.megabytesPerSecond(), median.docsPerSecond(),
                    first.path().equals("archive directly") ? "" : String.format("%.2f", best.docsPerSecond() / direct)));
        }
        return b.toString();
    }
}
