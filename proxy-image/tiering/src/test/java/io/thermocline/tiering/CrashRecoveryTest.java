package io.thermocline.tiering;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import io.thermocline.config.FeederConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Invariants 1-3 under crashes: a seeded random workload of inserts, updates and deletes goes
 * through the fast tier (the way the proxy sends it: deletes with fences, updates of cold documents
 * after a promotion) while the feeder, evictor and warmer crash at their fault points (including
 * between the archive write and the checkpoint) and are killed and restarted at random moments.
 * After quiescence the archive must equal a reference database that received the same writes,
 * field for field, and the fast tier must hold every document inside the window.
 */
class CrashRecoveryTest {

    static final int OPERATIONS = 120;

    /** Seeds 1-10; {@code -Dcrash.seeds=1-40} or {@code -Dcrash.seeds=7,19} runs others (to chase a rare failure). */
    static LongStream seeds() {
        String spec = System.getProperty("crash.seeds", "1-10").trim();
        LongStream.Builder seeds = LongStream.builder();
        for (String part : spec.split(",")) {
            String[] range = part.trim().split("-");
            long from = Long.parseLong(range[0].trim());
            long to = range.length > 1 ? Long.parseLong(range[1].trim()) : from;
            for (long seed = from; seed <= to; seed++) {
                seeds.add(seed);
            }
        }
        return seeds.build();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void archiveEqualsReferenceAfterRandomCrashes(long seed) throws Exception {
        Instant now = Instant.now();
        try (TwoTiers tiers = new TwoTiers();
             EmbeddedReplicaSet referenceSet = EmbeddedReplicaSet.builder().name("reference").build().start();
             MongoClient referenceClient = MongoClients.create(referenceSet.connectionString());
             Chaos chaos = new Chaos(tiers, seed)) {
            MongoCollection<BsonDocument> reference = referenceClient.getDatabase("shop").getCollection("orders", BsonDocument.class);
            Random random = new Random(seed);
            List<Integer> live = new ArrayList<>();
            int nextId = 1;

            // adoption: the archive (the user's existing replica set) already holds data
            List<BsonDocument> adopted = new ArrayList<>();
            for (; nextId <= 30; nextId++) {
                adopted.add(order(nextId, age(random, now), "adopted"));
                live.add(nextId);
            }
            tiers.archiveOrders().insertMany(adopted);
            reference.insertMany(adopted);

            chaos.start();
            CopyUp promotion = new CopyUp(tiers.fast, tiers.archive, tiers.store, new OwnWrites(tiers.fast, tiers.store, "proxy/test"),
                    new MirrorBarrier(tiers.fast, tiers.store, "proxy/test"), Duration.ofSeconds(30), Duration.ofMinutes(10),
                    FaultInjection.NONE);
            for (int op = 0; op < OPERATIONS; op++) {
                int choice = random.nextInt(10);
                if (choice < 4 || live.isEmpty()) {
                    BsonDocument document = order(nextId, age(random, now), "v0");
                    tiers.fastOrders().insertOne(document);
                    reference.insertOne(document);
                    live.add(nextId++);
                } else if (choice < 8) {
                    int id = live.get(random.nextInt(live.size()));
                    var update = Updates.combine(Updates.inc("n", 1), Updates.set("state", "v" + op));
                    updateAsProxy(tiers, promotion, id, update);
                    reference.updateOne(Filters.eq("_id", id), update);
                } else {
                    int id = live.remove(random.nextInt(live.size()));
                    tiers.userDeletes.deleteOne(TwoTiers.NS, new BsonInt32(id));
                    reference.deleteOne(Filters.eq("_id", id));
                }
                chaos.maybeKill(random);
            }
            chaos.close();

            // quiescence: clean workers run until the feeder caught up, warming completed and a pass finished
            tiers.feeder(new FeederConfig(50, Duration.ofMillis(10), true), TwoTiers.feederOptions(FaultInjection.NONE)
                    .withLeaseDuration(Duration.ofSeconds(1)));
            Warmer warmer = tiers.warmer(7, TwoTiers.warmerOptions(FaultInjection.NONE));
            Evictor evictor = tiers.evictor(TwoTiers.evictorOptions(FaultInjection.NONE));
            while (!warmer.warmAll()) {
                Thread.sleep(50);
            }
            while (!evictor.runPass().complete()) {
                Thread.sleep(50);
            }
            tiers.sync();

            List<BsonDocument> expected = all(reference);
            assertThat(all(tiers.archiveOrders())).as("seed %d: archive equals the reference", seed).isEqualTo(expected);
            Instant cutoff = now.minus(TwoTiers.POLICY.hotWindow());
            for (BsonDocument document : expected) {
                boolean inWindow = !Instant.ofEpochMilli(document.getDateTime("createdAt").getValue()).isBefore(cutoff);
                BsonDocument held = TwoTiers.byId(tiers.fastOrders(), document.get("_id"));
                if (inWindow) {
                    assertThat(held).as("seed %d: fast tier holds %s", seed, document.toJson()).isEqualTo(document);
                } else {
                    assertThat(held).as("seed %d: evicted %s", seed, document.toJson()).isNull();
                }
            }
            assertThat(chaos.crashes.get()).as("seed %d: the workers did crash", seed).isPositive();
            assertThat(chaos.crashedBetweenArchiveAndCheckpoint).as("seed %d: a feeder died between archive write and checkpoint", seed).isTrue();
        }
    }

    /** Recent (well inside the one-hour window) or old (well outside it), never near the boundary. */
    static Instant age(Random random, Instant now) {
        return random.nextInt(10) < 7 ? now.minusSeconds(random.nextInt(1800)) : now.minusSeconds(7200 + random.nextInt(3600));
    }

    /** A point update through the proxy: in the fast tier; if it does not hold the document, promote it first. */
    static void updateAsProxy(TwoTiers tiers, CopyUp promotion, int id, org.bson.conversions.Bson update) throws InterruptedException {
        for (int attempt = 0; attempt < 200; attempt++) {
            UpdateResult result = tiers.fastOrders().updateOne(Filters.eq("_id", id), update);
            if (result.getMatchedCount() == 1) {
                return;
            }
            promotion.copy(TwoTiers.NS, List.of(new BsonInt32(id)));
        }
        throw new AssertionError("could not update document " + id + " through the fast tier");
    }

    /** Runs the three workers with crashes at fault points, kills them at random and restarts them. */
    static final class Chaos implements AutoCloseable, FaultInjection {
        final TwoTiers tiers;
        final Random random;
        final AtomicInteger crashes = new AtomicInteger();
        final AtomicBoolean stopped = new AtomicBoolean();
        final AtomicBoolean crashedBetweenArchiveAndCheckpoint = new AtomicBoolean();
        final AtomicInteger generation = new AtomicInteger();
        volatile Feeder feeder;
        volatile Evictor evictor;
        volatile Warmer warmer;
        Thread supervisor;

        Chaos(TwoTiers tiers, long seed) {
            this.tiers = tiers;
            this.random = new Random(seed * 31 + 7);
        }

        @Override
        public void reached(FaultPoint point) {
            boolean crash;
            synchronized (random) {
                crash = !stopped.get() && random.nextInt(25) == 0;
            }
            // every seed dies at least once between the archive's acknowledgement and the checkpoint
            if (point == FaultPoint.FEEDER_ARCHIVE_WRITTEN && !stopped.get() && !crashedBetweenArchiveAndCheckpoint.getAndSet(true)) {
                crash = true;
            }
            if (crash) {
                crashes.incrementAndGet();
                throw new InjectedCrash(point);
            }
        }

        void start() throws InterruptedException {
            feeder = newFeeder();
            feeder.awaitStreaming(Duration.ofSeconds(10));
            evictor = newEvictor();
            warmer = newWarmer();
            supervisor = new Thread(() -> {
                while (!stopped.get()) {
                    if (!feeder.running()) {
                        feeder = newFeeder();
                    }
                    if (!evictor.running()) {
                        evictor = newEvictor();
                    }
                    if (!warmer.running()) {
                        warmer = newWarmer();
                    }
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "chaos-supervisor");
            supervisor.start();
        }

        /** Called by the workload between operations: sometimes kills a worker wherever it is. */
        void maybeKill(Random workload) {
            int pick = workload.nextInt(60);
            if (pick == 0) {
                feeder.close();
                crashes.incrementAndGet();
            } else if (pick == 1) {
                evictor.close();
                crashes.incrementAndGet();
            } else if (pick == 2) {
                warmer.close();
                crashes.incrementAndGet();
            }
        }

        Feeder newFeeder() {
            return tiers.startFeeder(new FeederConfig(20, Duration.ofMillis(10), generation.get() % 2 == 0),
                    TwoTiers.feederOptions(this).withInstanceId("feeder-" + generation.incrementAndGet())
                            .withLeaseDuration(Duration.ofMillis(600)));
        }

        Evictor newEvictor() {
            return tiers.evictor(TwoTiers.evictorOptions(this)).startLoop();
        }

        Warmer newWarmer() {
            return tiers.warmer(5, TwoTiers.warmerOptions(this)).startLoop();
        }

        @Override
        public void close() throws InterruptedException {
            stopped.set(true);
            if (supervisor != null) {
                supervisor.join();
            }
            feeder.close();
            evictor.close();
            warmer.close();
        }
    }
}
