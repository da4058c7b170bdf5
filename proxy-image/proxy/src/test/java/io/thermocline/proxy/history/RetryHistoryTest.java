package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.chaos.DroppingRelay;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.history.ExactlyOnceChecker.Anomaly;
import io.thermocline.proxy.history.ExactlyOnceChecker.Attempt;
import io.thermocline.proxy.history.ExactlyOnceChecker.Counter;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.proxy.tiered.TierPair;
import io.thermocline.proxy.tiered.TieredProxy;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Exactly-once under retries (issue 23, items 1 and 5): clients with the official Java driver
 * ({@code retryWrites=true}), each behind its own {@link DroppingRelay} over two proxy replicas, run
 * {@code updateOne} and {@code findOneAndUpdate} increments of a few counters with filters on the age field;
 * a random share of the replies is dropped with connections refused for a while, so the driver retries,
 * mostly on the other replica. Meanwhile the coverage bound moves back and forth across the filters' age
 * bound (so attempt and retry take different paths: forwarded as sent, guarded) and the proxies are
 * restarted. {@link ExactlyOnceChecker} then checks that every operation ran at most once, every
 * acknowledged one exactly once with the reply one database gives.
 *
 * <p>Seeds: {@code -Dretry.history.seeds=1-300} ({@code 1-2} by default); {@code -Dretry.history.operations=N}
 * operations per client. Each seed prints a line; the summary after all of them gives seeds run and anomalies.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class RetryHistoryTest {

    static final int CLIENTS = 4;
    static final int COUNTERS = 3;
    static final int OPERATIONS = Integer.getInteger("retry.history.operations", 12);
    static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    static final Instant SINCE = NOW.minus(Duration.ofMinutes(20));
    static final Instant WIDE = NOW.minus(Duration.ofHours(1));
    static final Instant NARROW = NOW.minus(Duration.ofMinutes(5));

    static TierPair tiers;
    static com.mongodb.reactivestreams.client.MongoClient fastWorkers;
    static com.mongodb.reactivestreams.client.MongoClient archiveWorkers;
    static MongoClient fastDirect;
    static Feeder feeder;
    static final ProxyServer[] proxies = new ProxyServer[2];
    static final AtomicInteger seedsRun = new AtomicInteger();
    static final AtomicInteger anomaliesFound = new AtomicInteger();
    static final AtomicLong operationsRun = new AtomicLong();

    static LongStream seeds() {
        return Seeds.from("retry.history.seeds", "1-2");
    }

    @BeforeAll
    static void start() throws Exception {
        tiers = TierPair.open();
        fastWorkers = TierClients.client(tiers.fastUri(), "retry-history-workers");
        archiveWorkers = TierClients.client(tiers.archiveUri(), "retry-history-workers");
        fastDirect = MongoClients.create(tiers.fastUri());
        new MetadataStore(fastWorkers).ensureCollections();
        feeder = new Feeder(fastWorkers, archiveWorkers, List.of(TieredFleet.POLICY), new FeederConfig(100, Duration.ofMillis(20), true),
                Feeder.Options.defaults().withInstanceId("retry-history-feeder").withProbeInterval(Duration.ofMillis(50))
                        .withLeaseDuration(Duration.ofSeconds(3)).withErrorBackoff(Duration.ofMillis(50))
                        .withRegistry(new PrometheusRegistry())).start();
        for (int i = 0; i < proxies.length; i++) {
            proxies[i] = proxy(i);
        }
        bound(WIDE);
    }

    @AfterAll
    static void stop() throws Exception {
        System.out.printf("retry history: seeds run %d, operations %d, anomalies %d%n", seedsRun.get(), operationsRun.get(), anomaliesFound.get());
        for (ProxyServer p : proxies) {
            p.close();
        }
        feeder.close();
        fastDirect.close();
        fastWorkers.close();
        archiveWorkers.close();
        tiers.close();
    }

    private static ProxyServer proxy(int index) throws Exception {
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n  causalWaitTimeout: 5s\n"
                + "tiers:\n  fast:\n    uri: " + tiers.fastUri() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + tiers.archiveUri() + "\n    connectionBudget: 8\n"
                + "fleet:\n  instanceId: retry-history-" + index + "\n"
                + "auth:\n  mode: disabled\n"
                + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n";
        ThermoclineConfig config = ConfigLoader.parse(yaml, Map.of());
        ProxySettings settings = ProxySettings.from(config).withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
        return ProxyServer.create(config, settings, TieredProxy.Options.defaults().withFollowInterval(TieredFleet.FOLLOW)).start();
    }

    /** Publishes the coverage bound, as the evictor (narrower) or the warmer (wider) would. */
    private static void bound(Instant oldestCovered) {
        new MetadataStore(fastWorkers).updateNamespace(TieredFleet.POLICY.namespace(), s -> s.withCoverage(oldestCovered));
    }

    private static MongoCollection<BsonDocument> fastOrders() {
        return fastDirect.getDatabase("shop").getCollection("orders", BsonDocument.class);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void everyRetriedWriteRunsOnce(long seed) throws Exception {
        Random random = new Random(seed);
        List<String> counters = new ArrayList<>();
        for (int c = 0; c < COUNTERS; c++) {
            String tag = "retry-h" + seed + "-c" + c + "-" + random.nextInt(1_000_000);
            counters.add(tag);
            // in the fast tier, inside the window: only the proof of the filters' routes changes, not the documents
            fastOrders().insertOne(new BsonDocument("_id", new BsonString(tag)).append("tag", new BsonString(tag))
                    .append("createdAt", new BsonDateTime(NOW.minus(Duration.ofMinutes(10)).toEpochMilli()))
                    .append("n", new BsonInt32(0)).append("ops", new BsonArray()));
        }
        List<DroppingRelay> relays = new ArrayList<>();
        for (int k = 0; k < CLIENTS; k++) {
            relays.add(new DroppingRelay(List.of(proxies[0].port(), proxies[1].port())));
        }
        List<Attempt> attempts = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger boundMoves = new AtomicInteger();
        AtomicInteger restarts = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS + 2);
        try {
            long chaosSeed = random.nextLong();
            Future<?> chaos = pool.submit(() -> chaos(new Random(chaosSeed), relays, running, boundMoves, restarts));
            List<Future<?>> clients = new ArrayList<>();
            for (int k = 0; k < CLIENTS; k++) {
                int client = k;
                long clientSeed = random.nextLong();
                clients.add(pool.submit(() -> client(seed, client, new Random(clientSeed), relays.get(client), counters, attempts)));
            }
            for (Future<?> f : clients) {
                f.get(20, TimeUnit.MINUTES);
            }
            running.set(false);
            chaos.get(1, TimeUnit.MINUTES);
        } finally {
            running.set(false);
            pool.shutdownNow();
            for (DroppingRelay r : relays) {
                r.close();
            }
            bound(WIDE);
        }
        Map<String, Counter> finals = new LinkedHashMap<>();
        for (String tag : counters) {
            BsonDocument d = fastOrders().find(Filters.eq("_id", tag)).first();
            List<String> ops = new ArrayList<>();
            d.getArray("ops").forEach(v -> ops.add(v.asString().getValue()));
            finals.put(tag, new Counter(d.getNumber("n").longValue(), ops));
        }
        List<Anomaly> anomalies = ExactlyOnceChecker.check(attempts, finals);
        long acknowledged = attempts.stream().filter(Attempt::acknowledged).count();
        int drops = relays.stream().mapToInt(DroppingRelay::drops).sum();
        seedsRun.incrementAndGet();
        operationsRun.addAndGet(attempts.size());
        anomaliesFound.addAndGet(anomalies.size());
        System.out.printf("retry history seed=%d operations=%d acknowledged=%d failed=%d replies dropped=%d bound moves=%d"
                        + " proxy restarts=%d anomalies=%d%n", seed, attempts.size(), acknowledged, attempts.size() - acknowledged, drops,
                boundMoves.get(), restarts.get(), anomalies.size());
        assertThat(anomalies).as("seed " + seed + " (rerun: -Dretry.history.seeds=" + seed + ")").isEmpty();
        assertThat(attempts).hasSize(CLIENTS * OPERATIONS);
        assertThat(drops).as("replies were dropped, so the drivers retried").isPositive();
    }

    /** One client: its own driver behind its own relay; about a third of its replies are dropped. */
    private static void client(long seed, int client, Random random, DroppingRelay relay, List<String> counters, List<Attempt> attempts) {
        try (MongoClient driver = MongoClients.create(relay.uri("retryWrites=true&serverSelectionTimeoutMS=20000&heartbeatFrequencyMS=500"))) {
            MongoCollection<BsonDocument> orders = driver.getDatabase("shop").getCollection("orders", BsonDocument.class);
            for (int i = 0; i < OPERATIONS; i++) {
                String id = String.format("op-%d-%02d-%04d", seed, client, i);
                String counter = counters.get(random.nextInt(counters.size()));
                if (random.nextInt(3) == 0) {
                    relay.dropReplyTo(id, Duration.ofMillis(200 + random.nextInt(600)));
                }
                BsonDocument filter = new BsonDocument("tag", new BsonString(counter))
                        .append("createdAt", new BsonDocument("$gte", new BsonDateTime(SINCE.toEpochMilli())));
                var change = Updates.combine(Updates.inc("n", 1), Updates.push("ops", id));
                try {
                    if (random.nextBoolean()) {
                        UpdateResult r = orders.updateOne(filter, change);
                        attempts.add(Attempt.acknowledged(id, counter, r.getMatchedCount(), r.getModifiedCount()));
                    } else {
                        BsonDocument after = orders.findOneAndUpdate(filter, change, new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
                        long once = after == null ? 0 : after.getArray("ops").stream().filter(v -> v.equals(new BsonString(id))).count();
                        attempts.add(Attempt.acknowledged(id, counter, after == null ? 0 : 1, once));
                    }
                } catch (RuntimeException e) {
                    attempts.add(Attempt.failed(id, counter)); // the retry failed too: it may have run once, or not
                }
            }
        }
    }

    /** Moves the bound across the filters' age bound every 50-250 ms and restarts a proxy every 2-4 s. */
    private static void chaos(Random random, List<DroppingRelay> relays, AtomicBoolean running, AtomicInteger boundMoves,
                              AtomicInteger restarts) {
        long nextRestart = System.nanoTime() + Duration.ofMillis(2000 + random.nextInt(2000)).toNanos();
        boolean narrow = false;
        try {
            while (running.get()) {
                Thread.sleep(50 + random.nextInt(200));
                narrow = !narrow;
                bound(narrow ? NARROW : WIDE);
                boundMoves.incrementAndGet();
                if (System.nanoTime() > nextRestart) {
                    int which = random.nextInt(proxies.length);
                    proxies[which].close();
                    proxies[which] = proxy(which);
                    for (DroppingRelay r : relays) {
                        r.retarget(which, proxies[which].port());
                    }
                    restarts.incrementAndGet();
                    nextRestart = System.nanoTime() + Duration.ofMillis(2000 + random.nextInt(2000)).toNanos();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
