package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.thermocline.config.Mode;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.mode.ShadowEvidence;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Issue 16 on the embedded stack: shadow evidence, the guarded cutover, and a drain under concurrent writes across two proxies. */
@Timeout(300)
class ModesTest {

    @Test
    void shadowReportsAPlantedDivergenceByIdAndTheCutoverWaitsForCleanEvidence() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            Instant t0 = Instant.now();
            List<BsonDocument> existing = new ArrayList<>();
            for (int id = 1; id <= 30; id++) {
                existing.add(order(id, t0.minusSeconds(60L * id), id));
            }
            stack.archiveOrders().insertMany(existing);
            stack.startWorkers();
            stack.startFollower();
            stack.switchTo(Mode.SHADOW, false, Phase.SHADOWING, Duration.ofSeconds(60));
            awaitWarmed(stack);

            ModeDocument refused = requestTieredAndAwaitRefusal(stack, "fewer than shadow.minComparisons");
            assertThat(refused.phase()).isEqualTo(Phase.SHADOWING);

            // the fast tier is changed behind Thermocline's back (a marked write, so the feeder leaves the archive alone)
            plant(stack, 999);
            Date since = Date.from(t0.minusSeconds(1800));
            List<BsonDocument> seen = stack.orders().find(Filters.gte("createdAt", since)).into(new ArrayList<>());
            assertThat(seen).as("the client gets the archive's answer").contains(order(7, t0.minusSeconds(420), 7));
            ShadowEvidence diverged = awaitEvidence(stack, e -> e.diverged() > 0);
            assertThat(diverged.samples().get(0).ids()).contains(new BsonInt32(7));
            assertThat(diverged.samples().get(0).fields()).containsExactly("qty");
            // the explanation follows the shared tiering state; under load it may be stale for a moment (then: archive, fail closed)
            BsonDocument mode = null;
            for (long until = System.nanoTime() + Duration.ofSeconds(20).toNanos(); System.nanoTime() < until; Thread.sleep(100)) {
                BsonDocument explain = stack.client.getDatabase("shop").runCommand(new BsonDocument("explain",
                        new BsonDocument("find", new BsonString("orders")).append("filter",
                                new BsonDocument("createdAt", new BsonDocument("$gte", new BsonDateTime(since.getTime()))))), BsonDocument.class);
                mode = explain.getDocument("thermocline").getDocument("mode");
                if (mode.getString("tieredWouldServe").getValue().equals("fast_tier")) {
                    break;
                }
            }
            assertThat(mode.getString("tieredWouldServe").getValue()).isEqualTo("fast_tier");
            assertThat(mode.getString("phase").getValue()).isEqualTo("Shadowing");
            assertThat(mode.getBoolean("lastComparisonAgreed").getValue()).isFalse();
            requestTieredAndAwaitRefusal(stack, "diverged at");

            // a cutover refuses writes until the follower applied the archive through the cutover point: with the follower
            // stopped the gate holds it back (before, the fleet entered CuttingOver and refused writes for as long as it was down)
            stack.stopFollower();
            assertThat(requestTieredAndAwaitRefusal(stack, "the archive follower is not running").phase()).isEqualTo(Phase.SHADOWING);
            stack.startFollower();

            // fixed: after the quiet period and enough clean comparisons the cutover goes through
            plant(stack, 7);
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (stack.modes().read().phase() != Phase.TIERED) {
                assertThat(System.nanoTime()).as("cutover allowed once the evidence is clean: %s", stack.modes().read().toBson().toJson())
                        .isLessThan(deadline);
                stack.orders().find(Filters.gte("createdAt", since)).into(new ArrayList<>());
                Thread.sleep(100);
            }
            stack.awaitPhase(Phase.TIERED, Duration.ofSeconds(10));
            stack.orders().insertOne(order(100, Instant.now(), 100));
            assertThat(stack.fastOrders().find(Filters.eq("_id", 100)).first()).as("tiered again: inserts go to the fast tier").isNotNull();
        }
    }

    /**
     * ShadowHistoryTest seed 27: right after the cutover a count missed an acknowledged insert. The replica that saw
     * Tiered first wrote to the fast tier while a slower one, still cutting over, read the archive without the read
     * barrier. A new phase's writes now wait until every live proxy acknowledged it.
     */
    @Test
    void afterTheCutoverNoWriteLandsWhileAnotherReplicaStillReadsTheArchiveWithoutTheBarrier() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(300))) {
            // a replica that reads the mode document every 2 s (within the 5 s lease): it sees Tiered up to 2 s late
            ProxyServer slow = stack.anotherProxy("tiered-test-slow", Duration.ofSeconds(2));
            stack.startWorkers();
            stack.startFollower();
            stack.switchTo(Mode.SHADOW, false, Phase.SHADOWING, Duration.ofSeconds(60));
            try (MongoClient viaSlow = MongoClients.create("mongodb://127.0.0.1:" + slow.port() + "/?retryWrites=false")) {
                MongoCollection<BsonDocument> slowOrders = viaSlow.getDatabase("shop").getCollection("orders", BsonDocument.class);
                stack.modes().request(Mode.TIERED, true, "cli");
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (stack.routing.modes().gate().view().document().phase() != Phase.TIERED) {
                    assertThat(System.nanoTime()).as("the first replica sees Tiered").isLessThan(deadline);
                    Thread.sleep(2);
                }
                // the feeder stopped: the archive cannot learn of the insert but through the read barrier's wait for it
                stack.stopFeeder();
                int refused = 0;
                while (true) {
                    try {
                        stack.orders().insertOne(order(4242, Instant.now(), 4242));
                        break;
                    } catch (MongoException e) {
                        refused++;
                        assertThat(System.nanoTime()).as("the write goes through once the fleet follows: %s", e.getMessage()).isLessThan(deadline);
                        Thread.sleep(5);
                    }
                }
                Thread restart = new Thread(() -> {
                    try {
                        Thread.sleep(1500);
                        stack.startFeeder();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                restart.start();
                // a filter no coverage proves: the archive answers, past the read barrier once the replica is tiered (it
                // waits for the restarted feeder); a replica still cutting over read the archive at once and counted 0
                long counted = slowOrders.countDocuments(Filters.eq("qty", 4242));
                restart.join();
                assertThat(counted).as("the slow replica counts the insert acknowledged before (refused %d times first)", refused).isEqualTo(1);
            }
        }
    }

    @Test
    void drainUnderConcurrentWritesThroughTwoProxiesLeavesTheArchiveAloneCurrent() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(300))) {
            // a slow replica (it reads the mode document every second, the first one every 50 ms) and a feeder that
            // batches for 300 ms: a replica acting on the old mode has time to lose a write
            ProxyServer second = stack.anotherProxy("tiered-test-1", Duration.ofSeconds(1));
            Instant t0 = Instant.now();
            stack.startWorkers();
            stack.startFollower();
            stack.coverSince(t0.minus(Duration.ofHours(1)));
            try (MongoClient viaSecond = MongoClients.create("mongodb://127.0.0.1:" + second.port() + "/?retryWrites=true")) {
                List<MongoCollection<BsonDocument>> proxies = List.of(stack.orders(),
                        viaSecond.getDatabase("shop").getCollection("orders", BsonDocument.class));
                Map<Integer, Integer> acknowledged = new ConcurrentHashMap<>();
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong refused = new AtomicLong();
                List<Thread> writers = new ArrayList<>();
                for (int w = 0; w < 6; w++) {
                    int writer = w;
                    Thread t = new Thread(() -> {
                        // each id is written twice, through one proxy then the other: if a replica still wrote to the fast
                        // tier while the other wrote to the archive, the feeder would mirror the first write over the second
                        for (int seq = 0; !stop.get(); seq++) {
                            int id = writer * 100_000 + seq / 2;
                            int v = seq % 2 + 1;
                            MongoCollection<BsonDocument> via = proxies.get((seq + writer) % 2);
                            while (true) {
                                try {
                                    via.updateOne(Filters.eq("_id", id), Updates.combine(Updates.set("v", v),
                                            Updates.setOnInsert("createdAt", new BsonDateTime(System.currentTimeMillis()))),
                                            new UpdateOptions().upsert(true));
                                    acknowledged.put(id, v);
                                    break;
                                } catch (MongoException e) {
                                    refused.incrementAndGet(); // retryable refusals while the fleet switches; the same write again
                                }
                            }
                        }
                    });
                    t.start();
                    writers.add(t);
                }
                Thread.sleep(1500);
                ModeDocument drained = stack.switchTo(Mode.DRAINING, false, Phase.DRAINED, Duration.ofSeconds(60));
                assertThat(drained.drain().drainedAt()).isNotNull();
                Thread.sleep(1500);
                stop.set(true);
                for (Thread t : writers) {
                    t.join(30_000);
                }
                assertThat(acknowledged).isNotEmpty();
                // drained: the archive alone is the reference, with every acknowledged write, with no feeder to wait for
                stack.stopFeeder();
                for (Map.Entry<Integer, Integer> e : acknowledged.entrySet()) {
                    BsonDocument archived = stack.archiveOrders().find(Filters.eq("_id", e.getKey())).first();
                    assertThat(archived).as("id %d in the archive", e.getKey()).isNotNull();
                    assertThat(archived.getInt32("v").getValue()).as("id %d: last acknowledged write (refused %d)", e.getKey(), refused.get())
                            .isEqualTo(e.getValue());
                }
            }
        }
    }

    /** Changes order 7 in the fast tier behind Thermocline's back (a marked write, so the feeder leaves the archive alone). */
    private static void plant(TieredStack stack, int qty) {
        new OwnWrites(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test/plant").inTransaction(session -> {
            Blocking.run(Namespace.of(TieredStack.POLICY).in(stack.fastWorkers)
                    .updateOne(session, Filters.eq("_id", 7), Updates.set("qty", qty)));
            return null;
        });
    }

    private static BsonDocument order(int id, Instant createdAt, int qty) {
        return new BsonDocument("_id", new BsonInt32(id)).append("createdAt", new BsonDateTime(createdAt.toEpochMilli()))
                .append("qty", new BsonInt32(qty));
    }

    private static void awaitWarmed(TieredStack stack) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            var state = new MetadataStore(stack.fastWorkers).namespace(TieredStack.POLICY.namespace());
            if (state.warmer() != null && state.warmer().complete() && state.oldestCovered() != null
                    && !(stack.routing.table().coverage(TieredStack.POLICY.namespace()) instanceof io.thermocline.tiering.state.CoverageBound.Nothing)) {
                return;
            }
            assertThat(System.nanoTime()).as("the warmer finished").isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static ModeDocument requestTieredAndAwaitRefusal(TieredStack stack, String because) throws InterruptedException {
        stack.modes().request(Mode.TIERED, false, "cli");
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            ModeDocument d = stack.modes().read();
            if (d.refusal() != null && d.refusal().contains(because)) {
                return d;
            }
            assertThat(System.nanoTime()).as("refusal '%s' in %s", because, d.toBson().toJson()).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static ShadowEvidence awaitEvidence(TieredStack stack, java.util.function.Predicate<ShadowEvidence> until) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            ShadowEvidence e = stack.routing.modes().shadow().evidence().get(TieredStack.POLICY.namespace());
            if (e != null && until.test(e)) {
                return e;
            }
            assertThat(System.nanoTime()).as("shadow evidence: %s", e == null ? null : e.toBson().toJson()).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
