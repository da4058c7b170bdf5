package io.thermocline.proxy.tiered;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;

/**
 * The whole tiered stack in one JVM: a fast tier and an archive (embedded replica sets), the
 * tiering proxy in front of them, and the feeder, evictor and warmer, each restartable. Clients
 * use {@link #client} (the official sync driver through the proxy).
 */
final class TieredStack implements AutoCloseable {

    static final CollectionPolicy POLICY = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofHours(1));
    static final Duration FOLLOW = Duration.ofMillis(50);

    final EmbeddedReplicaSet fastSet;
    final EmbeddedReplicaSet archiveSet;
    final com.mongodb.reactivestreams.client.MongoClient fastWorkers;
    final com.mongodb.reactivestreams.client.MongoClient archiveWorkers;
    final MongoClient fastDirect;
    final MongoClient archiveDirect;
    final TieredRouting routing;
    final ProxyServer proxy;
    final MongoClient client;
    final FeederConfig feederConfig;
    private Feeder feeder;
    private Evictor evictor;
    private Warmer warmer;

    TieredStack(Duration causalWaitTimeout, Duration feederBatchWait) throws Exception {
        fastSet = EmbeddedReplicaSet.builder().name("fast").build().start();
        archiveSet = EmbeddedReplicaSet.builder().name("archive").build().start();
        fastWorkers = TierClients.client(fastSet.connectionString(), "test-workers");
        archiveWorkers = TierClients.client(archiveSet.connectionString(), "test-workers");
        fastDirect = MongoClients.create(fastSet.connectionString());
        archiveDirect = MongoClients.create(archiveSet.connectionString());
        new MetadataStore(fastWorkers).ensureCollections();
        feederConfig = new FeederConfig(100, feederBatchWait, true);
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "  causalWaitTimeout: " + causalWaitTimeout.toMillis() + "ms\n"
                + "tiers:\n  fast:\n    uri: " + fastSet.connectionString() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + archiveSet.connectionString() + "\n    connectionBudget: 8\n"
                + "fleet:\n  instanceId: tiered-test-0\n"
                + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n";
        ThermoclineConfig config = ConfigLoader.parse(yaml, Map.of());
        ProxySettings settings = ProxySettings.from(config)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
        routing = TieredProxy.routing(fastSet.connectionString(), archiveSet.connectionString(), config.collections(),
                config.proxy().causalWaitTimeout(), settings.instanceId(),
                TieredProxy.Options.defaults().withFollowInterval(FOLLOW));
        proxy = new ProxyServer(settings, routing).start();
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true");
    }

    MongoCollection<BsonDocument> orders() {
        return client.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    MongoCollection<BsonDocument> fastOrders() {
        return fastDirect.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    MongoCollection<BsonDocument> archiveOrders() {
        return archiveDirect.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    /** Publishes that the fast tier covers everything since {@code bound} (as after a warm-up) and waits until these proxies follow it. */
    void coverSince(java.time.Instant bound, TieredRouting... others) throws InterruptedException {
        new MetadataStore(fastWorkers).updateNamespace(POLICY.namespace(), s -> s.withCoverage(bound));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<TieredRouting> all = new java.util.ArrayList<>(List.of(others));
        all.add(routing);
        while (all.stream().anyMatch(r -> r.table().coverage(POLICY.namespace()) instanceof io.thermocline.tiering.state.CoverageBound.Nothing)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the proxies did not follow the shared state within 10 s");
            }
            Thread.sleep(20);
        }
    }

    void startFeeder() throws InterruptedException {
        feeder = new Feeder(fastWorkers, archiveWorkers, List.of(POLICY), feederConfig,
                Feeder.Options.defaults().withInstanceId("feeder-test").withProbeInterval(Duration.ofMillis(50))
                        .withLeaseDuration(Duration.ofSeconds(3)).withErrorBackoff(Duration.ofMillis(50))
                        .withRegistry(new PrometheusRegistry())).start();
        feeder.awaitStreaming(Duration.ofSeconds(10));
    }

    void stopFeeder() {
        if (feeder != null) {
            feeder.close();
            feeder = null;
        }
    }

    void startEvictor() {
        Evictor.Options options = Evictor.Options.defaults()
                // every proxy must have seen a raised bound before the evictor deletes under it
                .withBoundPropagationDelay(FOLLOW.multipliedBy(4))
                .withBarrierTimeout(Duration.ofSeconds(10)).withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry());
        evictor = new Evictor(fastWorkers, archiveWorkers, List.of(POLICY), new EvictorConfig(Duration.ofMillis(100), 50, 100_000),
                options).startLoop();
    }

    void stopEvictor() {
        if (evictor != null) {
            evictor.close();
            evictor = null;
        }
    }

    void startWarmer() {
        Warmer.Options options = Warmer.Options.defaults().withBarrierTimeout(Duration.ofSeconds(10))
                .withRecheckInterval(Duration.ofMillis(100)).withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry()).withFaults(FaultInjection.NONE);
        warmer = new Warmer(fastWorkers, archiveWorkers, List.of(POLICY), new WarmerConfig(50, 100_000), options).startLoop();
    }

    void stopWarmer() {
        if (warmer != null) {
            warmer.close();
            warmer = null;
        }
    }

    void startWorkers() throws InterruptedException {
        startFeeder();
        startWarmer();
        startEvictor();
    }

    @Override
    public void close() {
        stopEvictor();
        stopWarmer();
        stopFeeder();
        client.close();
        proxy.close();
        fastWorkers.close();
        archiveWorkers.close();
        fastDirect.close();
        archiveDirect.close();
        fastSet.close();
        archiveSet.close();
    }
}
