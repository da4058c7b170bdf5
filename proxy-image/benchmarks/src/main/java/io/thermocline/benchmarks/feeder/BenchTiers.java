package io.thermocline.benchmarks.feeder;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.FeederConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;

/** The feeder benchmarks' setting: two embedded one-member replica sets (fast tier, archive) and their clients. */
final class BenchTiers implements AutoCloseable {

    final EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder().name("fast").build().start();
    final EmbeddedReplicaSet archiveSet = EmbeddedReplicaSet.builder().name("archive").build().start();
    final MongoClient user = MongoClients.create(fastSet.connectionString());
    final com.mongodb.reactivestreams.client.MongoClient fast = TierClients.client(fastSet.connectionString(), "bench-feeder");
    final com.mongodb.reactivestreams.client.MongoClient archive = TierClients.client(archiveSet.connectionString(), "bench-feeder");
    final MongoCollection<Document> orders = user.getDatabase("bench").getCollection("orders");
    final MirrorBarrier barrier;

    BenchTiers() {
        MetadataStore store = new MetadataStore(fast);
        store.ensureCollections();
        barrier = new MirrorBarrier(fast, store, "bench");
    }

    /** A streaming feeder, then {@code documents} seeded and mirrored (so the seed is streamed, not copied by the first start's resync). */
    Feeder feederWithSeed(FeederConfig config, PrometheusRegistry registry, int documents) throws InterruptedException {
        Feeder feeder = new Feeder(fast, archive, List.of(FeederBenchmark.POLICY), config, Feeder.Options.defaults().withRegistry(registry)).start();
        feeder.awaitStreaming(Duration.ofSeconds(30));
        List<Document> seed = new ArrayList<>();
        for (int i = 0; i < documents; i++) {
            seed.add(new Document("_id", i).append("createdAt", new java.util.Date()).append("n", 0));
        }
        orders.insertMany(seed);
        barrier.sync(Duration.ofSeconds(60));
        return feeder;
    }

    /** Fails when the archive does not hold exactly the fast tier's documents. */
    void verify() {
        try (MongoClient client = MongoClients.create(archiveSet.connectionString())) {
            var archived = client.getDatabase("bench").getCollection("orders").find().sort(new Document("_id", 1)).into(new ArrayList<>());
            var source = orders.find().sort(new Document("_id", 1)).into(new ArrayList<>());
            if (!archived.equals(source)) {
                throw new IllegalStateException("archive differs from the fast tier after draining");
            }
        }
    }

    @Override
    public void close() {
        fast.close();
        archive.close();
        user.close();
        fastSet.close();
        archiveSet.close();
    }
}
