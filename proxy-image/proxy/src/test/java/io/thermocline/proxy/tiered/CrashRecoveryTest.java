package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.chaos.WorkerChaos;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.conversions.Bson;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Invariants 1-3 under crashes, through the production write path: a seeded random workload of
 * inserts, updates and deletes goes through the tiering proxy (which promotes cold documents, fences
 * deletes, and so on) while the feeder, evictor and warmer die at their fault points (one feeder
 * always between the archive write and its checkpoint), between any two of their driver calls, and
 * at random moments, and are restarted. After quiescence the archive must equal a reference database
 * that received the same writes, field for field, and the fast tier must hold exactly the documents
 * inside the window.
 */
class CrashRecoveryTest {

    static final int OPERATIONS = 120;

    /** Seeds 1-3; {@code -Dcrash.seeds=1-40} or {@code -Dcrash.seeds=7,19} runs others (to chase a rare failure). */
    static LongStream seeds() {
        return Seeds.from("crash.seeds", "1-3");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void archiveEqualsReferenceAfterRandomCrashes(long seed) throws Exception {
        Instant now = Instant.now();
        try (TierPair tiers = TierPair.open();
             TieredFleet fleet = new TieredFleet(tiers, 1, null);
             EmbeddedReplicaSet referenceSet = EmbeddedReplicaSet.builder().name("reference").build().start();
             MongoClient referenceClient = MongoClients.create(referenceSet.connectionString());
             MongoClient client = MongoClients.create(fleet.uri(List.of(0)))) {
            MongoCollection<BsonDocument> reference = referenceClient.getDatabase("shop").getCollection("orders", BsonDocument.class);
            MongoCollection<BsonDocument> proxied = client.getDatabase("shop").getCollection("orders", BsonDocument.class);
            Random random = new Random(seed);
            List<Integer> live = new ArrayList<>();
            int nextId = 1;

            // adoption: the archive (the user's existing replica set) already holds data
            List<BsonDocument> adopted = new ArrayList<>();
            for (; nextId <= 30; nextId++) {
                adopted.add(order(nextId, age(random, now), "adopted"));
                live.add(nextId);
            }
            fleet.archiveOrders().insertMany(adopted);
            reference.insertMany(adopted);

            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start()) {
                try {
                    for (int op = 0; op < OPERATIONS; op++) {
                        int choice = random.nextInt(10);
                        if (choice < 4 || live.isEmpty()) {
                            BsonDocument document = order(nextId, age(random, now), "v0");
                            proxied.insertOne(document);
                            reference.insertOne(document);
                            live.add(nextId++);
                        } else if (choice < 8) {
                            int id = live.get(random.nextInt(live.size()));
                            Bson update = Updates.combine(Updates.inc("n", 1), Updates.set("state", "v" + op));
                            assertThat(proxied.updateOne(Filters.eq("_id", id), update).getMatchedCount())
                                    .as("seed %d: update of %d matched through the proxy", seed, id).isEqualTo(1);
                            reference.updateOne(Filters.eq("_id", id), update);
                        } else {
                            int id = live.remove(random.nextInt(live.size()));
                            assertThat(proxied.deleteOne(Filters.eq("_id", id)).getDeletedCount())
                                    .as("seed %d: delete of %d through the proxy", seed, id).isEqualTo(1);
                            reference.deleteOne(Filters.eq("_id", id));
                        }
                    }
                    // on a loaded machine the feeder may not have written a batch while armed yet: write on until it
                    // did, so every run has the crash between the archive's write and the checkpoint
                    long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (!chaos.crashedBetweenArchiveAndCheckpoint.get() && System.nanoTime() < until) {
                        BsonDocument document = order(nextId, age(random, now), "v0");
                        proxied.insertOne(document);
                        reference.insertOne(document);
                        live.add(nextId++);
                        Thread.sleep(50);
                    }
                } finally {
                    // quiescence: clean workers run until the feeder caught up, warming completed and a pass finished
                    chaos.quiesce();
                }
                assertRecovered(seed, now, fleet, reference, chaos);
            }
        }
    }

    private static void assertRecovered(long seed, Instant now, TieredFleet fleet, MongoCollection<BsonDocument> reference,
                                        WorkerChaos chaos) {
        List<BsonDocument> expected = all(reference);
        assertThat(all(fleet.archiveOrders())).as("seed %d: archive equals the reference", seed).isEqualTo(expected);
        Instant cutoff = now.minus(TieredFleet.POLICY.hotWindow());
        for (BsonDocument document : expected) {
            boolean inWindow = !Instant.ofEpochMilli(document.getDateTime("createdAt").getValue()).isBefore(cutoff);
            BsonDocument held = fleet.fastOrders().find(Filters.eq("_id", document.get("_id"))).first();
            if (inWindow) {
                assertThat(held).as("seed %d: fast tier holds %s", seed, document.toJson()).isEqualTo(document);
            } else {
                assertThat(held).as("seed %d: evicted %s", seed, document.toJson()).isNull();
            }
        }
        assertThat(chaos.crashes.get()).as("seed %d: the workers did crash", seed).isPositive();
        assertThat(chaos.crashedBetweenArchiveAndCheckpoint).as("seed %d: a feeder died between archive write and checkpoint", seed).isTrue();
    }

    static BsonDocument order(int id, Instant createdAt, String state) {
        return new BsonDocument("_id", new BsonInt32(id)).append("createdAt", new BsonDateTime(createdAt.toEpochMilli()))
                .append("state", new BsonString(state));
    }

    /** Recent (well inside the one-hour window) or old (well outside it), never near the boundary. */
    static Instant age(Random random, Instant now) {
        return random.nextInt(10) < 7 ? now.minusSeconds(random.nextInt(1800)) : now.minusSeconds(7200 + random.nextInt(3600));
    }

    static List<BsonDocument> all(MongoCollection<BsonDocument> collection) {
        return collection.find().sort(Sorts.ascending("_id")).into(new ArrayList<>());
    }
}
