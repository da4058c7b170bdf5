package io.thermocline.proxy.tiered.reads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ClientSessionOptions;
import com.mongodb.MongoCommandException;
import com.mongodb.ReadPreference;
import com.mongodb.Tag;
import com.mongodb.TagSet;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.Member;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.proxy.tiered.TieredProxy;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reads served by archive secondaries (a three-member archive whose secondaries lag, pause and die while
 * clients write and read): archive-routed reads of a collection with {@code secondaryReads: offload} and
 * pass-through reads with a {@code secondary} read preference never miss a write acknowledged before them
 * (linearizable mode) nor go backwards, and secondaries do serve reads once they have caught up.
 */
@Timeout(180)
class SecondaryReadsTest {

    private static final int WRITERS = 3;
    private static final int WRITES = 25;

    private EmbeddedReplicaSet fast;
    private EmbeddedReplicaSet archive;
    private com.mongodb.reactivestreams.client.MongoClient fastWorkers;
    private com.mongodb.reactivestreams.client.MongoClient archiveWorkers;
    private Feeder feeder;
    private ProxyServer proxy;

    private void start(String secondaryReads) throws Exception {
        start(secondaryReads, 3);
    }

    private void start(String secondaryReads, int archiveMembers) throws Exception {
        fast = EmbeddedReplicaSet.builder().name("fast").build().start();
        archive = EmbeddedReplicaSet.builder().name("archive").members(archiveMembers).build().start();
        fastWorkers = TierClients.client(fast.connectionString(), "test-workers");
        archiveWorkers = TierClients.client(archive.connectionString(), "test-workers");
        new MetadataStore(fastWorkers).ensureCollections();
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "  causalWaitTimeout: 10s\n"
                + "tiers:\n  fast:\n    uri: " + fast.connectionString() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + archive.connectionString() + "\n    connectionBudget: 12\n"
                + "fleet:\n  instanceId: secondary-reads-0\n"
                + "auth:\n  mode: disabled\n"
                + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h,"
                + " secondaryReads: " + secondaryReads + "}\n";
        ThermoclineConfig config = ConfigLoader.parse(yaml, Map.of());
        ProxySettings settings = ProxySettings.from(config)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(50));
        proxy = ProxyServer.create(config, settings, TieredProxy.Options.defaults().withFollowInterval(Duration.ofMillis(50))).start();
        feeder = new Feeder(fastWorkers, archiveWorkers, config.collections(), new FeederConfig(100, Duration.ofMillis(5), true),
                Feeder.Options.defaults().withInstanceId("feeder-test").withProbeInterval(Duration.ofMillis(50))
                        .withLeaseDuration(Duration.ofSeconds(3)).withErrorBackoff(Duration.ofMillis(50))
                        .withRegistry(new PrometheusRegistry())).start();
        assertThat(feeder.awaitStreaming(Duration.ofSeconds(20))).as("feeder streaming").isTrue();
    }

    @AfterEach
    void stop() {
        for (AutoCloseable c : new AutoCloseable[] {proxy, feeder, fastWorkers, archiveWorkers, fast, archive}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // closing the rest regardless
            }
        }
    }

    @Test
    void offloadedArchiveReadsSeeEveryEarlierWriteWhileSecondariesLagPauseAndDie() throws Exception {
        start("offload");
        List<String> violations = runWorkload("orders", ReadPreference.primary(), true);
        assertThat(violations).as("reads that missed an acknowledged write or went backwards").isEmpty();
        assertThat(secondaryReads("offload")).as("archive reads served by secondaries (once caught up)").isPositive();
        assertThat(archivePresentPings()).as("pings reading the archive's present").isPositive();
    }

    @Test
    void withoutArchiveSecondariesModeSecondaryFailsAtOnceAndOffloadingSendsNoPing() throws Exception {
        start("offload", 1);
        // the proxy must know the archive has no secondary before it is asked (a ping means it saw one)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!proxy.readiness().ready()) {
            assertThat(System.nanoTime()).as("the proxy sees the archive's primary: %s", proxy.readiness().reason()).isLessThan(deadline);
            Thread.sleep(20);
        }
        String uri = "mongodb://127.0.0.1:" + proxy.port() + "/?retryReads=false";
        try (MongoClient client = MongoClients.create(uri)) {
            for (String name : List.of("orders", "notes")) {
                collection(client, name, ReadPreference.primary()).insertOne(new BsonDocument("_id", new BsonInt32(1))
                        .append("writer", new BsonInt32(0)).append("createdAt", new BsonDateTime(System.currentTimeMillis())));
            }
            // offloaded (primary) and secondaryPreferred reads: the primary serves them, with no ping for the present
            for (ReadPreference preference : List.of(ReadPreference.primary(), ReadPreference.secondaryPreferred())) {
                for (String name : List.of("orders", "notes")) {
                    assertThat(collection(client, name, preference).countDocuments()).as(name + " " + preference).isEqualTo(1);
                }
            }
            assertThat(archivePresentPings()).as("pings reading the archive's present").isZero();
            for (String name : List.of("orders", "notes")) {
                assertThatThrownBy(() -> collection(client, name, ReadPreference.secondary()).countDocuments())
                        .as(name + " with mode secondary").isInstanceOfSatisfying(MongoCommandException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(133);
                            assertThat(e.getErrorCodeName()).isEqualTo("FailedToSatisfyReadPreference");
                            assertThat(e.getErrorMessage()).contains("{mode: \"secondary\"}", "set archive", "no secondary is known")
                                    .doesNotContain(" ms: ");
                        });
            }
        }
    }

    @Test
    void modeSecondaryWhoseTagsNoSecondaryMatchesFailsAfterTheSelectionWait() throws Exception {
        start("primary");
        String uri = "mongodb://127.0.0.1:" + proxy.port() + "/?retryReads=false";
        TagSet north = new TagSet(new Tag("dc", "north"));
        try (MongoClient client = MongoClients.create(uri)) {
            collection(client, "notes", ReadPreference.primary()).insertOne(new BsonDocument("_id", new BsonInt32(1)));
            assertThat(collection(client, "notes", ReadPreference.secondaryPreferred(north)).countDocuments())
                    .as("secondaryPreferred falls back to the primary").isEqualTo(1);
            assertThatThrownBy(() -> collection(client, "notes", ReadPreference.secondary(north)).countDocuments())
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(133);
                        assertThat(e.getErrorMessage()).contains("secondary", "after 5000 ms", "tag sets [{\"dc\": \"north\"}]");
                    });
        }
        assertThat(secondaryReads("read_preference")).as("reads served by secondaries").isZero();
    }

    @Test
    void passThroughSecondaryReadsKeepReadYourWritesInACausalSession() throws Exception {
        start("primary");
        List<String> violations = runWorkload("notes", ReadPreference.secondary(), false);
        assertThat(violations).as("reads that missed an acknowledged write or went backwards").isEmpty();
        assertThat(secondaryReads("read_preference")).as("reads served by secondaries").isPositive();
    }

    @Test
    void aPausedSecondaryServesNoReadItWouldHaveToWaitFor() throws Exception {
        start("offload");
        Member paused = archive.secondaries().get(0);
        archive.pauseReplication(paused);
        String uri = "mongodb://127.0.0.1:" + proxy.port() + "/?retryReads=false&socketTimeoutMS=3000";
        try (MongoClient client = MongoClients.create(uri)) {
            MongoCollection<BsonDocument> docs = collection(client, "orders", ReadPreference.primary());
            for (int i = 0; i < 15; i++) {
                docs.insertOne(new BsonDocument("_id", new BsonInt32(i)).append("writer", new BsonInt32(0))
                        .append("createdAt", new BsonDateTime(System.currentTimeMillis())));
                // a read on the paused member would wait for its point past the socket timeout
                assertThat(docs.countDocuments(Filters.gte("writer", 0))).isEqualTo(i + 1);
            }
        } finally {
            archive.resumeReplication(paused);
        }
        assertThat(laggingSkipped()).as("reads that passed over the paused member").isPositive();
    }

    /**
     * Writers insert their own documents (each in a causally consistent session, reading its count back after
     * every write); one reader counts everything and checks that the count never goes back (in a causally consistent
     * session: the guarantee a mongos gives secondary reads) and, when {@code linearizable} (the tiered path's
     * default), that it is at least the number of inserts acknowledged before the read started. Meanwhile the archive's secondaries lag, one
     * pauses, one dies and comes back. Then, with the archive idle, the reader keeps reading.
     */
    private List<String> runWorkload(String collection, ReadPreference readPreference, boolean linearizable) throws Exception {
        List<String> violations = new ArrayList<>();
        ConcurrentLinkedQueue<String> found = new ConcurrentLinkedQueue<>();
        AtomicInteger acknowledged = new AtomicInteger();
        AtomicBoolean writing = new AtomicBoolean(true);
        String uri = "mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true&retryReads=true";
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 2);
        try (MongoClient client = MongoClients.create(uri)) {
            List<Future<?>> running = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                running.add(pool.submit(() -> {
                    try (ClientSession session = client.startSession(ClientSessionOptions.builder().causallyConsistent(true).build())) {
                        MongoCollection<BsonDocument> docs = collection(client, collection, readPreference);
                        for (int i = 0; i < WRITES; i++) {
                            docs.insertOne(session, new BsonDocument("_id", new BsonString(writer + "-" + i))
                                    .append("writer", new BsonInt32(writer))
                                    .append("createdAt", new BsonDateTime(System.currentTimeMillis())));
                            acknowledged.incrementAndGet();
                            long mine = docs.countDocuments(session, Filters.eq("writer", writer));
                            if (mine != i + 1) {
                                found.add("writer " + writer + " read " + mine + " of its documents after acknowledged insert " + (i + 1));
                            }
                        }
                    }
                    return null;
                }));
            }
            Future<?> reader = pool.submit(() -> {
                MongoCollection<BsonDocument> docs = collection(client, collection, readPreference);
                try (ClientSession session = client.startSession(ClientSessionOptions.builder().causallyConsistent(true).build())) {
                    long last = 0;
                    int idleReads = 0;
                    while (idleReads < 60) {
                        int before = acknowledged.get();
                        boolean idle = !writing.get();
                        long now = docs.countDocuments(session, Filters.gte("writer", 0));
                        if (now < last || linearizable && now < before) {
                            found.add("count " + now + " after " + before + " acknowledged inserts (previous count " + last + ")");
                        }
                        last = now;
                        idleReads += idle ? 1 : 0;
                    }
                }
                return null;
            });
            Future<?> chaos = pool.submit(() -> {
                List<Member> secondaries = archive.secondaries();
                while (writing.get()) {
                    archive.setReplicationLag(Duration.ofMillis(300));
                    Thread.sleep(600);
                    archive.setReplicationLag(Duration.ZERO);
                    archive.pauseReplication(secondaries.get(0));
                    Thread.sleep(600);
                    archive.resumeReplication(secondaries.get(0));
                    archive.kill(secondaries.get(1));
                    Thread.sleep(600);
                    archive.restart(secondaries.get(1));
                    Thread.sleep(300);
                }
                return null;
            });
            for (Future<?> f : running) {
                f.get();
            }
            writing.set(false);
            chaos.get();
            reader.get();
        } finally {
            pool.shutdownNow();
        }
        violations.addAll(found);
        return violations;
    }

    private static MongoCollection<BsonDocument> collection(MongoClient client, String name, ReadPreference readPreference) {
        return client.getDatabase("shop").getCollection(name, BsonDocument.class).withReadPreference(readPreference);
    }

    /** thermocline_proxy_secondary_read_choices_total{tier="archive", member="secondary", reason}. */
    private long secondaryReads(String reason) throws IOException {
        return metric("thermocline_proxy_secondary_read_choices_total", "tier=\"archive\"", "member=\"secondary\"",
                "reason=\"" + reason + "\"");
    }

    private long archivePresentPings() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        proxy.metrics().writeTo(out);
        Matcher m = Pattern.compile("thermocline_proxy_archive_present_pings_total ([0-9.eE+]+)").matcher(out.toString(StandardCharsets.UTF_8));
        assertThat(m.find()).as("the archive present pings metric is exposed").isTrue();
        return (long) Double.parseDouble(m.group(1));
    }

    private long laggingSkipped() throws IOException {
        return metric("thermocline_proxy_lagging_members_skipped_total", "tier=\"archive\"");
    }

    /** The sum of the series of {@code name} whose labels contain every one of {@code labels}. */
    private long metric(String name, String... labels) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        proxy.metrics().writeTo(out);
        Matcher m = Pattern.compile(name + "\\{([^}]*)} ([0-9.eE+]+)").matcher(out.toString(StandardCharsets.UTF_8));
        long total = 0;
        while (m.find()) {
            String found = m.group(1);
            if (Arrays.stream(labels).allMatch(found::contains)) {
                total += (long) Double.parseDouble(m.group(2));
            }
        }
        return total;
    }
}
