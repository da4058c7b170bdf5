package io.thermocline.proxy.tiered;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ReadConsistency;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.proxy.tiered.writes.WriteRaces;
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
 * The whole tiered stack in one JVM: a fast tier and an archive ({@link TierPair}: embedded replica
 * sets, or real ones with {@code -Dthermocline.tiers=external}), the
 * tiering proxy in front of them, and the feeder, evictor and warmer, each restartable. Clients
 * use {@link #client} (the official sync driver through the proxy).
 */
final class TieredStack implements AutoCloseable {

    static final CollectionPolicy POLICY = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofHours(1));
    static final Duration FOLLOW = Duration.ofMillis(50);
    static final io.thermocline.config.ShadowConfig SHADOW =
            new io.thermocline.config.ShadowConfig(1.0, Duration.ofSeconds(2), 5, 1000);

    final TierPair tiers;
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
    private io.thermocline.tiering.mode.ArchiveFollower follower;
    private MongoClient followerArchive;

    /** The worker step a test runs at a point of the write path ({@link WriteRaces}); none by default. */
    final java.util.concurrent.atomic.AtomicReference<WriteRaces> writeRaces =
            new java.util.concurrent.atomic.AtomicReference<>(WriteRaces.NONE);
    /** Runs on each proxy's stream of fast-tier writes between receiving a tiered write and recording it; nothing by default. */
    final java.util.concurrent.atomic.AtomicReference<Runnable> writeStreamReceived =
            new java.util.concurrent.atomic.AtomicReference<>(() -> {});

    private final ThermoclineConfig config;
    private final ProxySettings settings;
    private final java.util.List<AutoCloseable> moreProxies = new java.util.ArrayList<>();
    /** The routing of each {@link #anotherProxy} replica, in order (a test waits for them to follow the state). */
    final java.util.List<TieredRouting> moreRoutings = new java.util.concurrent.CopyOnWriteArrayList<>();

    TieredStack(Duration causalWaitTimeout, Duration feederBatchWait) throws Exception {
        this(causalWaitTimeout, feederBatchWait, ReadConsistency.LINEARIZABLE);
    }

    TieredStack(Duration causalWaitTimeout, Duration feederBatchWait, ReadConsistency readConsistency)
            throws Exception {
        this(causalWaitTimeout, feederBatchWait, readConsistency, TierPair.open());
    }

    /** As above, in front of {@code tiers} (e.g. {@link TierPair#embeddedFast}: a fast tier whose majority can lag). */
    TieredStack(Duration causalWaitTimeout, Duration feederBatchWait, ReadConsistency readConsistency, TierPair tiers)
            throws Exception {
        this.tiers = tiers;
        fastWorkers = TierClients.client(tiers.fastUri(), "test-workers");
        archiveWorkers = TierClients.client(tiers.archiveUri(), "test-workers");
        fastDirect = MongoClients.create(tiers.fastUri());
        archiveDirect = MongoClients.create(tiers.archiveUri());
        new MetadataStore(fastWorkers).ensureCollections();
        feederConfig = new FeederConfig(100, feederBatchWait, true);
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "  causalWaitTimeout: " + causalWaitTimeout.toMillis() + "ms\n"
                + "  readConsistency: " + readConsistency.configName() + "\n"
                + "tiers:\n  fast:\n    uri: " + tiers.fastUri() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + tiers.archiveUri() + "\n    connectionBudget: 8\n"
                + "fleet:\n  instanceId: tiered-test-0\n"
                + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n";
        config = ConfigLoader.parse(yaml, Map.of());
        settings = ProxySettings.from(config)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
        proxy = new ProxyServer(settings, layer(settings.instanceId(), FOLLOW)).start();
        routing = proxy.tieredRouting().orElseThrow();
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true");
    }

    private TieredProxy.Layer layer(String instanceId, Duration follow) {
        return TieredProxy.routing(
                tiers.fastUri(),
                tiers.archiveUri(),
                config.collections(),
                config.proxy().causalWaitTimeout(),
                config.proxy().readConsistency(),
                instanceId,
                TieredProxy.Options.defaults()
                        .withFollowInterval(follow)
                        .withWriteRaces(point -> writeRaces.get().reached(point))
                        .withWriteStreamReceived(() -> writeStreamReceived.get().run())
                        // every shadowed read compared; a short quiet period and few comparisons for the cutover gate
                        .withModes(null, SHADOW, Duration.ofSeconds(5)));
    }

    /** Another proxy replica in front of the same tiers, with the same config (closed with the stack). */
    ProxyServer anotherProxy(String instanceId) throws Exception {
        return anotherProxy(instanceId, FOLLOW);
    }

    /** As {@link #anotherProxy(String)}, re-reading the shared state (and the mode) every {@code follow}: a slow replica. */
    ProxyServer anotherProxy(String instanceId, Duration follow) throws Exception {
        return anotherProxy(instanceId, follow, s -> s);
    }

    /** As {@link #anotherProxy(String, Duration)}, its settings changed by {@code tune} (e.g. a short stall confirmation). */
    ProxyServer anotherProxy(String instanceId, Duration follow, java.util.function.UnaryOperator<ProxySettings> tune)
            throws Exception {
        ProxyServer another =
                new ProxyServer(tune.apply(settings.withInstanceId(instanceId)), layer(instanceId, follow)).start();
        TieredRouting itsRouting = another.tieredRouting().orElseThrow();
        moreProxies.add(another);
        moreRoutings.add(itsRouting);
        return another;
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
        while (all.stream()
                .anyMatch(r -> r.table().coverage(POLICY.namespace())
                        instanceof io.thermocline.tiering.state.CoverageBound.Nothing)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the proxies did not follow the shared state within 10 s");
            }
            Thread.sleep(20);
        }
    }

    /**
     * How many probes this stack's proxy wrote at its sync barrier: a write that needs the archive to hold every
     * earlier write writes one, then waits for the feeder to mirror it (a test's signal that a write waits there).
     */
    long syncBarrierProbes() {
        BsonDocument probe = fastDirect
                .getDatabase(MetadataStore.DATABASE)
                .getCollection(MetadataStore.PROBES, BsonDocument.class)
                .find(com.mongodb.client.model.Filters.eq("_id", "proxy/" + settings.instanceId()))
                .first();
        return probe == null ? 0 : probe.getNumber("seq").longValue();
    }

    void startFeeder() throws InterruptedException {
        feeder = new Feeder(
                        fastWorkers,
                        archiveWorkers,
                        List.of(POLICY),
                        feederConfig,
                        Feeder.Options.defaults()
                                .withInstanceId("feeder-test")
                                .withProbeInterval(Duration.ofMillis(50))
                                .withLeaseDuration(Duration.ofSeconds(3))
                                .withErrorBackoff(Duration.ofMillis(50))
                                .withDeadLetterRetryInterval(Duration.ofMillis(300))
                                .withRegistry(new PrometheusRegistry()))
                .start();
        // tests start writing once it streams: a feeder still resyncing would make them wait, or pass without the
        // feeder
        if (!feeder.awaitStreaming(Duration.ofSeconds(60))) {
            throw new IllegalStateException("the feeder does not stream after 60 s: " + feeder.lastCheckpoint());
        }
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
                .withBarrierTimeout(Duration.ofSeconds(10))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry());
        evictor = new Evictor(
                        fastWorkers,
                        archiveWorkers,
                        List.of(POLICY),
                        new EvictorConfig(Duration.ofMillis(100), 50, 100_000),
                        options)
                .start();
    }

    /**
     * An evictor whose passes the test runs itself ({@link Evictor#runPass}), not started: no bound propagation
     * delay (the test's proxies see the bound it raises through this stack's routing), barrier timeout 10 s.
     */
    Evictor evictorForPasses() {
        return new Evictor(
                fastWorkers,
                archiveWorkers,
                List.of(POLICY),
                new EvictorConfig(Duration.ofMillis(100), 50, 100_000),
                Evictor.Options.defaults()
                        .withBoundPropagationDelay(Duration.ZERO)
                        .withBarrierTimeout(Duration.ofSeconds(10))
                        .withRegistry(new PrometheusRegistry()));
    }

    void stopEvictor() {
        if (evictor != null) {
            evictor.close();
            evictor = null;
        }
    }

    void startWarmer() {
        Warmer.Options options = Warmer.Options.defaults()
                .withBarrierTimeout(Duration.ofSeconds(10))
                .withRecheckInterval(Duration.ofMillis(100))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry())
                .withFaults(FaultInjection.NONE);
        warmer = new Warmer(fastWorkers, archiveWorkers, List.of(POLICY), new WarmerConfig(50, 100_000), options)
                .start();
    }

    void stopWarmer() {
        if (warmer != null) {
            warmer.close();
            warmer = null;
        }
    }

    /** The archive follower (keeps the fast tier in step while the archive is authoritative). */
    void startFollower() {
        if (followerArchive == null) {
            followerArchive = MongoClients.create(com.mongodb.MongoClientSettings.builder()
                    .applyConnectionString(new com.mongodb.ConnectionString(tiers.archiveUri()))
                    .readConcern(com.mongodb.ReadConcern.MAJORITY)
                    .build());
        }
        follower = new io.thermocline.tiering.mode.ArchiveFollower(
                        fastWorkers, followerArchive, List.of(POLICY), "follower-test", Duration.ofMillis(20))
                .start();
    }

    void stopFollower() {
        if (follower != null) {
            follower.close();
            follower = null;
        }
    }

    io.thermocline.tiering.mode.ModeStore modes() {
        return new io.thermocline.tiering.mode.ModeStore(new MetadataStore(fastWorkers));
    }

    /** Requests {@code mode} and waits until the fleet's document reaches {@code phase}. */
    io.thermocline.tiering.mode.ModeDocument switchTo(
            io.thermocline.config.Mode mode, boolean override, io.thermocline.tiering.mode.Phase phase, Duration within)
            throws InterruptedException {
        modes().request(mode, override, "cli");
        return awaitPhase(phase, within);
    }

    io.thermocline.tiering.mode.ModeDocument awaitPhase(io.thermocline.tiering.mode.Phase phase, Duration within)
            throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            io.thermocline.tiering.mode.ModeDocument d = modes().read();
            // and this proxy lets the phase's writes through: every live proxy follows it
            if (d.phase() == phase
                    && routing.modes().gate().view().document().phase() == phase
                    && routing.modes().gate().fleetOnCurrentEpoch()) {
                return d;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the fleet did not reach " + phase + " within " + within + "; mode document: "
                        + d.toBson().toJson());
            }
            Thread.sleep(20);
        }
    }

    void startWorkers() throws InterruptedException {
        startFeeder();
        startWarmer();
        startEvictor();
    }

    @Override
    public void close() {
        stopFollower();
        if (followerArchive != null) {
            followerArchive.close();
        }
        stopEvictor();
        stopWarmer();
        stopFeeder();
        client.close();
        moreProxies.forEach(p -> {
            try {
                p.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        proxy.close();
        fastWorkers.close();
        archiveWorkers.close();
        fastDirect.close();
        archiveDirect.close();
        tiers.close();
    }
}
