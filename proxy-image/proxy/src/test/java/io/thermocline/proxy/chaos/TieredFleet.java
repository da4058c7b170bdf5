package io.thermocline.proxy.chaos;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ProxyConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.proxy.tiered.TierPair;
import io.thermocline.proxy.tiered.TieredProxy;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.bson.BsonDocument;

/**
 * Several tiering proxies (a fleet behind one Service) over one fast tier and one archive, and the
 * clients the workers and the checker use. The workers themselves are run by {@link WorkerChaos}.
 */
public final class TieredFleet implements AutoCloseable {

    public static final CollectionPolicy POLICY = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofHours(1));
    public static final Duration FOLLOW = Duration.ofMillis(50);

    public final TierPair tiers;
    public final List<ProxyServer> proxies = new ArrayList<>();
    public final com.mongodb.reactivestreams.client.MongoClient fastWorkers;
    public final com.mongodb.reactivestreams.client.MongoClient archiveWorkers;
    public final MongoClient archiveDirect;
    public final MongoClient fastDirect;
    public final String readConsistency;
    private final String secondaryReads;
    private final String moreConfig;

    /**
     * @param readConsistency the proxies' {@code proxy.readConsistency}, or null to leave it out (a
     *                        build without the setting)
     */
    public TieredFleet(TierPair tiers, int proxyCount, String readConsistency) throws Exception {
        this(tiers, proxyCount, readConsistency, null);
    }

    /** @param secondaryReads the policy's {@code secondaryReads}, or null to leave it out */
    public TieredFleet(TierPair tiers, int proxyCount, String readConsistency, String secondaryReads) throws Exception {
        this(tiers, proxyCount, readConsistency, secondaryReads, "");
    }

    /** @param moreConfig top-level config sections appended to each proxy's config (e.g. {@code shadow:}) */
    public TieredFleet(TierPair tiers, int proxyCount, String readConsistency, String secondaryReads, String moreConfig)
            throws Exception {
        this.tiers = tiers;
        this.moreConfig = moreConfig;
        this.readConsistency = readConsistency;
        this.secondaryReads = secondaryReads;
        fastWorkers = TierClients.client(tiers.fastUri(), "history-workers");
        archiveWorkers = TierClients.client(tiers.archiveUri(), "history-workers");
        archiveDirect = MongoClients.create(tiers.archiveUri());
        fastDirect = MongoClients.create(tiers.fastUri());
        new MetadataStore(fastWorkers).ensureCollections();
        for (int i = 0; i < proxyCount; i++) {
            ThermoclineConfig config = ConfigLoader.parse(yaml(i), Map.of());
            ProxySettings settings = ProxySettings.from(config)
                    .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
            proxies.add(ProxyServer.create(config, settings, TieredProxy.Options.defaults().withFollowInterval(FOLLOW)).start());
        }
    }

    private String yaml(int index) {
        return "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "  causalWaitTimeout: 5s\n"
                + (readConsistency == null ? "" : "  readConsistency: " + readConsistency + "\n")
                + "tiers:\n  fast:\n    uri: " + tiers.fastUri() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + tiers.archiveUri() + "\n    connectionBudget: 8\n"
                + "fleet:\n  instanceId: history-" + index + "\n"
                + "auth:\n  mode: disabled\n"
                + "collections:\n  - {database: " + POLICY.database() + ", collection: " + POLICY.collection()
                + ", ageField: " + POLICY.ageField() + ", hotWindow: 1h"
                + (secondaryReads == null ? "" : ", secondaryReads: " + secondaryReads) + "}\n"
                + moreConfig;
    }

    /** A connection string naming the given proxies: with several, the driver spreads operations over them. */
    public String uri(List<Integer> which) {
        return "mongodb://" + which.stream().map(i -> "127.0.0.1:" + proxies.get(i).port()).collect(Collectors.joining(","))
                + "/?retryWrites=true&serverSelectionTimeoutMS=5000&socketTimeoutMS=15000";
    }

    public MongoCollection<BsonDocument> archiveOrders() {
        return archiveDirect.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    public MongoCollection<BsonDocument> fastOrders() {
        return fastDirect.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    /** Waits until the archive holds every fast-tier write made so far. */
    public void sync() throws InterruptedException {
        MirrorBarrier barrier = new MirrorBarrier(fastWorkers, new MetadataStore(fastWorkers), "history-check");
        if (barrier.sync(Duration.ofSeconds(30)).isEmpty()) {
            throw new AssertionError("the feeder did not mirror a probe within 30 s");
        }
    }

    @Override
    public void close() {
        proxies.forEach(ProxyServer::close);
        fastWorkers.close();
        archiveWorkers.close();
        archiveDirect.close();
        fastDirect.close();
    }
}
