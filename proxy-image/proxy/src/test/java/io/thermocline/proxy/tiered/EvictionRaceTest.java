package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.EvictorConfig;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * User writes racing the evictor's removal of the same document, each held at the racy step by the
 * fast tier's failCommand fail point; each test goes on once the command is held there ({@link HeldCommand}) and
 * checks that the racing write completed while it was. (On a server with snapshot isolation the later write of each race
 * meets a WriteConflict; neither the evictor nor the proxy may depend on it.)
 *
 * <p>An update: the evictor checks a candidate against the archive, then deletes it in its
 * transaction; an update that commits between the evictor's re-read and its delete changes the version
 * the delete removes. If the feeder reaches the update's event only after the eviction, its lookup
 * finds nothing, so the archive keeps the older version: the update is gone.
 *
 * <p>A delete: its transaction read the document in the fast tier, and the evictor removes it before
 * the delete's own write: the delete then removes nothing in the fast tier, yet its tombstone makes the
 * feeder delete the archive copy. The client was told n=0 for a document gone from both tiers.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EvictionRaceTest {

    static TieredStack stack;
    static MirrorBarrier barrier;
    static final Instant NOW = Instant.now();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        barrier = new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "eviction-race-test");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** An evictor whose passes the test runs itself. */
    private static Evictor evictor(FaultInjection faults) {
        return new Evictor(stack.fastWorkers, stack.archiveWorkers, List.of(TieredStack.POLICY),
                new EvictorConfig(Duration.ofMillis(100), 50, 100_000), Evictor.Options.defaults()
                .withBoundPropagationDelay(Duration.ZERO).withBarrierTimeout(Duration.ofSeconds(10))
                .withRegistry(new PrometheusRegistry()).withFaults(faults));
    }

    /** An evictor pass on another thread (it waits at the fail point the test set). */
    static CompletableFuture<Evictor.PassResult> passInBackground(Evictor evictor) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return evictor.runPass();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void anUpdateCommittedWhileTheEvictorDeletesTheDocumentIsKept() throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(700_000, NOW.minus(Duration.ofHours(2)), "cold");
        stack.fastOrders().insertOne(cold); // an application write the feeder mirrors; outside the window
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored").isPresent();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 700_000)).first()).isEqualTo(cold);

        // the evictor's delete (findOneAndDelete), armed once it checked the document
        HeldCommand delete = new HeldCommand(stack.fastDirect, "{failCommands: ['delete', 'findAndModify'], blockConnection: true, blockTimeMS: 5000}");
        Evictor evictor = evictor(delete.armedAt(FaultPoint.EVICTOR_BEFORE_DELETE));
        try {
            CompletableFuture<Evictor.PassResult> pass = passInBackground(evictor);
            delete.awaitHeld(); // the evictor checked the document and its delete waits
            stack.stopFeeder(); // the feeder reaches the update's event after the eviction
            assertThat(stack.orders().updateOne(Filters.eq("_id", 700_000), Updates.set("state", "paid")).getModifiedCount())
                    .as("the update is acknowledged").isEqualTo(1);
            assertThat(pass).as("the update committed while the evictor's delete was held").isNotDone();
            pass.get(30, TimeUnit.SECONDS);
        } finally {
            delete.off();
            evictor.close();
            stack.startFeeder();
        }
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored after the eviction").isPresent();
        BsonDocument fast = stack.fastOrders().find(Filters.eq("_id", 700_000)).first();
        BsonDocument archived = stack.archiveOrders().find(Filters.eq("_id", 700_000)).first();
        String state = (fast != null ? fast : archived).getString("state").getValue();
        assertThat(state).as("the acknowledged update (fast tier: %s, archive: %s)", fast, archived).isEqualTo("paid");
        assertThat(stack.orders().find(Filters.eq("_id", 700_000)).first().getString("state").getValue())
                .as("read through the proxy").isEqualTo("paid");
    }

    @Test
    void aDeleteRacingTheEvictionOfItsDocumentDeletesItAndCountsIt() throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(800_000, NOW.minus(Duration.ofHours(2)), "cold");
        stack.fastOrders().insertOne(cold);
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored").isPresent();
        stack.stopFeeder(); // nothing else writes to the fast tier while the fail point waits for the delete's write
        Evictor evictor = evictor(FaultInjection.NONE);
        long n;
        HeldCommand tombstone = new HeldCommand(stack.fastDirect, "{failCommands: ['update'], blockConnection: true, blockTimeMS: 8000}");
        tombstone.arm();
        try {
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(
                    () -> stack.orders().deleteOne(Filters.eq("_id", 800_000)).getDeletedCount());
            tombstone.awaitHeld(); // the delete read the document and its tombstone write waits
            stack.startFeeder();
            evictor.runPass();
            assertThat(stack.fastOrders().countDocuments(Filters.eq("_id", 800_000))).as("evicted meanwhile").isZero();
            assertThat(delete).as("the eviction ran while the delete's write was held").isNotDone();
            n = delete.get(30, TimeUnit.SECONDS);
        } finally {
            tombstone.off();
            evictor.close();
        }
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored after the delete").isPresent();
        boolean survives = stack.fastOrders().countDocuments(Filters.eq("_id", 800_000)) + stack.archiveOrders()
                .countDocuments(Filters.eq("_id", 800_000)) > 0;
        assertThat(n + " deleted, document " + (survives ? "survives" : "gone")).as("n and the document agree, as on one database")
                .isEqualTo("1 deleted, document gone");
    }

    /**
     * An update and its undo (c to c' to c) between the evictor's check and its delete: the delete removes
     * content c, equal to what was checked, so it evicts. The feeder mirrored the first update (its lookup
     * found c') but reaches the second only after the eviction, whose lookup then finds nothing: the archive
     * keeps c', and the acknowledged c is gone from both tiers.
     */
    @Test
    void anUpdateAndItsUndoWhileTheEvictorDeletesTheDocumentAreKept() throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(900_000, NOW.minus(Duration.ofHours(2)), "c");
        stack.fastOrders().insertOne(cold);
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored").isPresent();
        HeldCommand delete = new HeldCommand(stack.fastDirect, "{failCommands: ['findAndModify'], blockConnection: true, blockTimeMS: 8000}");
        Evictor evictor = evictor(delete.armedAt(FaultPoint.EVICTOR_BEFORE_DELETE));
        try {
            CompletableFuture<Evictor.PassResult> pass = passInBackground(evictor);
            delete.awaitHeld(); // the evictor checked c against the archive and its delete waits
            stack.orders().updateOne(Filters.eq("_id", 900_000), Updates.set("state", "c'"));
            assertThat(barrier.sync(Duration.ofSeconds(10))).as("the first update is mirrored").isPresent();
            stack.stopFeeder();
            stack.orders().updateOne(Filters.eq("_id", 900_000), Updates.set("state", "c"));
            assertThat(pass).as("both updates committed while the evictor's delete was held").isNotDone();
            pass.get(30, TimeUnit.SECONDS);
        } finally {
            delete.off();
            evictor.close();
            stack.startFeeder();
        }
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored after the eviction").isPresent();
        BsonDocument fast = stack.fastOrders().find(Filters.eq("_id", 900_000)).first();
        BsonDocument archived = stack.archiveOrders().find(Filters.eq("_id", 900_000)).first();
        assertThat((fast != null ? fast : archived).getString("state").getValue())
                .as("the acknowledged undo (fast tier: %s, archive: %s)", fast, archived).isEqualTo("c");
    }
}
