package io.thermocline.tiering;

import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.reactivestreams.client.ClientSession;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.UserDeletes;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A fast tier and an archive, each an embedded single-member replica set, with the clients the
 * workers use (reactive) and the clients the tests use to play the user and to look (sync).
 * Tests only need the two connection strings: {@code -Dthermocline.tiers=external
 * -Dthermocline.fastUri=... -Dthermocline.archiveUri=...} runs the same tests on real replica sets
 * (their {@code shop} and metadata databases are dropped first).
 */
public final class TwoTiers implements AutoCloseable {

    public static final CollectionPolicy POLICY =
            new CollectionPolicy("shop", "orders", "createdAt", Duration.ofHours(1));
    public static final String NS = POLICY.namespace();

    private final List<AutoCloseable> ownedSets = new ArrayList<>();
    private EmbeddedReplicaSet embeddedArchive;
    public final com.mongodb.reactivestreams.client.MongoClient fast;
    public final com.mongodb.reactivestreams.client.MongoClient archive;
    public final com.mongodb.client.MongoClient fastSync;
    public final com.mongodb.client.MongoClient archiveSync;
    public final MetadataStore store;
    public final MirrorBarrier barrier;
    public final UserDeletes userDeletes;
    public final Fences fences;
    private final List<AutoCloseable> workers = new ArrayList<>();

    public TwoTiers() {
        this(
                EmbeddedReplicaSet.builder().name("fast"),
                EmbeddedReplicaSet.builder().name("archive"));
    }

    /** A fast tier whose oplog keeps only {@code entries} entries: a feeder down for longer loses its history (286). */
    public static TwoTiers withFastOplogOf(int entries) {
        return new TwoTiers(
                EmbeddedReplicaSet.builder().name("fast").oplogSize(entries),
                EmbeddedReplicaSet.builder().name("archive"));
    }

    /** An archive whose oplog keeps only {@code entries} entries: an archive follower down for longer loses its history (286). */
    public static TwoTiers withArchiveOplogOf(int entries) {
        return new TwoTiers(
                EmbeddedReplicaSet.builder().name("fast"),
                EmbeddedReplicaSet.builder().name("archive").oplogSize(entries));
    }

    private TwoTiers(EmbeddedReplicaSet.Builder fastTier, EmbeddedReplicaSet.Builder archiveTier) {
        String fastUri;
        String archiveUri;
        String kind = System.getProperty("thermocline.tiers", "embedded");
        if (kind.equals("external")) {
            fastUri = external("thermocline.fastUri");
            archiveUri = external("thermocline.archiveUri");
        } else if (kind.equals("embedded")) {
            // a worker killed inside a transaction leaves it to the server's lifetime limit: keep it short
            EmbeddedReplicaSet fastSet =
                    fastTier.transactionLifetime(Duration.ofSeconds(3)).build().start();
            EmbeddedReplicaSet archiveSet = archiveTier.build().start();
            ownedSets.add(fastSet);
            ownedSets.add(archiveSet);
            embeddedArchive = archiveSet;
            fastUri = fastSet.connectionString();
            archiveUri = archiveSet.connectionString();
        } else {
            throw new IllegalArgumentException("-Dthermocline.tiers=" + kind + ": use embedded or external");
        }
        fast = io.thermocline.tiering.worker.TierClients.client(fastUri, "test-workers");
        archive = io.thermocline.tiering.worker.TierClients.client(archiveUri, "test-workers");
        fastSync = MongoClients.create(fastUri);
        archiveSync = MongoClients.create(archiveUri);
        if (ownedSets.isEmpty()) {
            for (com.mongodb.client.MongoClient tier : List.of(fastSync, archiveSync)) {
                tier.getDatabase(POLICY.database()).drop();
                tier.getDatabase(MetadataStore.DATABASE).drop();
            }
        }
        store = new MetadataStore(fast);
        store.ensureCollections();
        barrier = new MirrorBarrier(fast, store, "test");
        userDeletes = new UserDeletes(fast, store);
        fences = new Fences(store);
    }

    /** A session on the fast tier, in a transaction begun with read concern local and write concern majority. */
    public ClientSession beginFastTransaction() {
        ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
        session.startTransaction(TransactionOptions.builder()
                .readConcern(ReadConcern.LOCAL)
                .writeConcern(WriteConcern.MAJORITY)
                .build());
        return session;
    }

    /** Runs {@code writes} in such a transaction, commits it and ends the session. */
    public void inFastTransaction(Consumer<ClientSession> writes) {
        ClientSession session = beginFastTransaction();
        try {
            writes.accept(session);
            Blocking.run(session.commitTransaction());
        } finally {
            session.close();
        }
    }

    /** The archive when it is the embedded replica set (its test hooks); empty against external tiers. */
    public java.util.Optional<EmbeddedReplicaSet> embeddedArchive() {
        return java.util.Optional.ofNullable(embeddedArchive);
    }

    public MongoCollection<BsonDocument> fastOrders() {
        return fastSync.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    public MongoCollection<BsonDocument> archiveOrders() {
        return archiveSync.getDatabase(POLICY.database()).getCollection(POLICY.collection(), BsonDocument.class);
    }

    public static BsonDocument order(int id, Instant createdAt, String state) {
        return new BsonDocument("_id", new BsonInt32(id))
                .append("createdAt", new BsonDateTime(createdAt.toEpochMilli()))
                .append("state", new BsonString(state));
    }

    public static List<BsonDocument> all(MongoCollection<BsonDocument> collection) {
        return collection.find().sort(Sorts.ascending("_id")).into(new ArrayList<>());
    }

    public static BsonDocument byId(MongoCollection<BsonDocument> collection, BsonValue id) {
        return collection.find(Filters.eq("_id", id)).first();
    }

    public static Feeder.Options feederOptions(FaultInjection faults) {
        return Feeder.Options.defaults()
                .withProbeInterval(Duration.ofMillis(50))
                .withLeaseDuration(Duration.ofSeconds(1))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry())
                .withFaults(faults);
    }

    /** Starts a feeder and waits until it streams (or stopped, for one that crashes at once). */
    public Feeder feeder(FeederConfig config, Feeder.Options options) {
        Feeder feeder = startFeeder(config, options);
        try {
            // a feeder still running but not streaming would leave a test writing before it reads: say so, do not go on
            if (!feeder.awaitStreaming(Duration.ofSeconds(60)) && feeder.running()) {
                throw new IllegalStateException(
                        "the feeder neither streams nor stopped after 60 s: " + feeder.lastCheckpoint());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return feeder;
    }

    /** Starts a feeder without waiting for it. */
    public Feeder startFeeder(FeederConfig config, Feeder.Options options) {
        Feeder feeder = new Feeder(fast, archive, List.of(POLICY), config, options).start();
        workers.add(feeder);
        return feeder;
    }

    public Feeder feeder() {
        return feeder(new FeederConfig(100, Duration.ofMillis(20), true), feederOptions(FaultInjection.NONE));
    }

    public static Evictor.Options evictorOptions(FaultInjection faults) {
        return Evictor.Options.defaults()
                .withBoundPropagationDelay(Duration.ofMillis(20))
                .withBarrierTimeout(Duration.ofSeconds(10))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry())
                .withFaults(faults);
    }

    public Evictor evictor(Evictor.Options options) {
        Evictor evictor = new Evictor(
                fast, archive, List.of(POLICY), new EvictorConfig(Duration.ofMillis(100), 50, 100_000), options);
        workers.add(evictor);
        return evictor;
    }

    public static Warmer.Options warmerOptions(FaultInjection faults) {
        return Warmer.Options.defaults()
                .withBarrierTimeout(Duration.ofSeconds(10))
                .withRecheckInterval(Duration.ofMillis(100))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry())
                .withFaults(faults);
    }

    public Warmer warmer(int batchSize, Warmer.Options options) {
        Warmer warmer = new Warmer(fast, archive, List.of(POLICY), new WarmerConfig(batchSize, 100_000), options);
        workers.add(warmer);
        return warmer;
    }

    private static String external(String property) {
        String uri = System.getProperty(property);
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException(
                    "-Dthermocline.tiers=external needs -D" + property + "=mongodb://... (a replica set)");
        }
        return uri;
    }

    /** Waits until the archive holds every fast-tier write made so far. */
    public void sync() throws InterruptedException {
        // a positive wait, over as soon as the feeder mirrored the probe: 20 s ran out in earlier sessions' runs at
        // load 40-60, where a feeder's batch waits its turn for a core
        if (barrier.sync(Duration.ofSeconds(60)).isEmpty()) {
            throw new AssertionError("the feeder did not mirror a probe within 60 s");
        }
    }

    @Override
    public void close() {
        for (AutoCloseable worker : workers) {
            try {
                worker.close();
            } catch (Exception ignored) {
                // closing everything regardless
            }
        }
        fast.close();
        archive.close();
        fastSync.close();
        archiveSync.close();
        for (AutoCloseable set : ownedSets) {
            try {
                set.close();
            } catch (Exception ignored) {
                // closing the other regardless
            }
        }
    }
}
