package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.EvictorConfig;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Point reads by {@code _id} that miss the fast tier and find no fence read the archive without the read
 * barrier ({@code causal.PointReadSkip}, proof in docs/consistency.md). Checked with the feeder stopped,
 * so every write of the test is unmirrored and a read that skipped wrongly would show the archive's stale
 * version; and on the one interleaving where a fence is all that stands between a skip and a stale answer:
 * an eviction of a version whose earlier writes (a delete, then a re-insert of the same content) the
 * feeder has not mirrored yet.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PointReadSkipTest {

    static TieredStack stack;
    static MirrorBarrier barrier;
    static MongoClient otherClient;
    static final Instant OLD = Instant.now().minus(Duration.ofHours(2)); // outside the 1 h window: never promoted

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(1), Duration.ofMillis(5));
        stack.startFeeder();
        barrier = new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "point-read-skip-test");
        otherClient = MongoClients.create("mongodb://127.0.0.1:" + stack.proxy.port());
    }

    @AfterAll
    static void stop() {
        otherClient.close();
        stack.close();
    }

    /** Another application client of the same proxy (its own connections): it never saw the writer's writes. */
    private static MongoCollection<BsonDocument> readerOrders() {
        return otherClient.getDatabase(TieredStack.POLICY.database()).getCollection(TieredStack.POLICY.collection(), BsonDocument.class);
    }

    @Test
    void pointReadsSeeEveryAcknowledgedWriteWithoutWaitingForTheFeeder() throws Exception {
        for (int id = 1; id <= 4; id++) {
            stack.archiveOrders().insertOne(SessionConsistencyTest.order(id, OLD.minusSeconds(id), "archived"));
        }
        // writes of cold documents pass a sync barrier (they need the feeder): bring 1 and 3 into the fast tier now
        stack.orders().updateOne(Filters.eq("_id", 1), Updates.set("state", "copied up"));
        stack.orders().updateOne(Filters.eq("_id", 3), Updates.set("state", "copied up"));
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        stack.stopFeeder(); // from here on nothing reaches the archive
        try {
            long skippedBefore = stack.routing.readBarrierCounts().skipped();
            assertThat(readerOrders().find(Filters.eq("_id", 4)).first())
                    .as("an archived document, read without the feeder").isEqualTo(SessionConsistencyTest.order(4, OLD.minusSeconds(4), "archived"));
            assertThat(count(2)).as("the count command").isEqualTo(1);
            assertThat(readerOrders().find(Filters.eq("_id", 99)).first()).as("never written").isNull();
            assertThat(stack.routing.readBarrierCounts().skipped() - skippedBefore).as("reads that skipped the barrier").isEqualTo(3);

            // another client's acknowledged writes, none of them mirrored
            stack.orders().updateOne(Filters.eq("_id", 1), Updates.set("state", "paid"));
            stack.orders().deleteOne(Filters.eq("_id", 2));
            stack.orders().insertOne(SessionConsistencyTest.order(5, OLD, "new and old-dated"));
            stack.orders().replaceOne(Filters.eq("_id", 3), SessionConsistencyTest.order(3, OLD, "replaced"));
            assertThat(readerOrders().find(Filters.eq("_id", 1)).first().getString("state").getValue()).isEqualTo("paid");
            assertThat(readerOrders().find(Filters.eq("_id", 2)).first()).as("deleted").isNull();
            assertThat(count(2)).as("deleted").isZero();
            assertThat(readerOrders().find(Filters.eq("_id", 5)).first()).isNotNull();
            assertThat(readerOrders().find(Filters.eq("_id", 3)).first().getString("state").getValue()).isEqualTo("replaced");
            assertThat(stack.archiveOrders().find(Filters.eq("_id", 2)).first()).as("the archive still holds the deleted one").isNotNull();

            // not a point read: it still waits for the feeder, which is stopped
            assertThatThrownBy(() -> readerOrders().countDocuments(Filters.eq("state", "archived")))
                    .isInstanceOfSatisfying(MongoException.class, e -> assertThat(e.getCode()).isEqualTo(262));
        } finally {
            stack.startFeeder();
        }
        assertThat(readerOrders().countDocuments(Filters.eq("state", "archived"))).as("4 only").isEqualTo(1);
    }

    /**
     * The evictor checks a document (content c), then deletes it if it still has content c. Meanwhile a user
     * deletes it (the feeder mirrors the delete) and re-inserts the same content (not mirrored). Were that
     * version evicted, the archive would have no copy until the feeder mirrors the insert, and a point read
     * finding neither document nor fence would skip the barrier and answer "not found" for an acknowledged
     * insert. The evictor keeps it: the fence changed since its check, and the archive does not hold it.
     */
    @Test
    void theEvictorKeepsAVersionWhoseEarlierWritesTheFeederHasNotMirrored() throws Exception {
        BsonDocument c = SessionConsistencyTest.order(700, OLD, "c");
        stack.orders().insertOne(c);
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored").isPresent();

        // the evictor's delete (findOneAndDelete), armed once it checked c against the archive
        HeldCommand delete = new HeldCommand(stack.fastDirect, "{failCommands: ['findAndModify'], blockConnection: true, blockTimeMS: 8000}");
        try (Evictor evictor = evictor(Clock.systemUTC(), Duration.ofSeconds(10), delete.armedAt(FaultPoint.EVICTOR_BEFORE_DELETE))) {
            CompletableFuture<Evictor.PassResult> pass = EvictionRaceTest.passInBackground(evictor);
            delete.awaitHeld(); // the evictor checked c and its delete waits
            assertThat(stack.orders().deleteOne(Filters.eq("_id", 700)).getDeletedCount()).isEqualTo(1);
            assertThat(barrier.sync(Duration.ofSeconds(10))).as("the delete is mirrored").isPresent();
            stack.stopFeeder();
            stack.orders().insertOne(c); // acknowledged, never mirrored while the feeder is stopped
            assertThat(pass).as("the delete and the re-insert committed while the evictor's delete was held").isNotDone();
            pass.get(30, TimeUnit.SECONDS);
        } finally {
            delete.off();
        }
        try {
            assertThat(stack.archiveOrders().countDocuments(Filters.eq("_id", 700))).as("not in the archive yet").isZero();
            assertThat(stack.fastOrders().countDocuments(Filters.eq("_id", 700))).as("kept in the fast tier").isEqualTo(1);
            assertThat(readerOrders().find(Filters.eq("_id", 700)).first()).as("a point read of the acknowledged insert").isEqualTo(c);
        } finally {
            stack.startFeeder();
        }
    }

    /**
     * An eviction fence keeps point reads of the evicted document at the barrier; it outlives its retention
     * while the feeder has not mirrored past it (before, only user-delete fences waited for the feeder).
     */
    @Test
    void evictionFencesOutliveTheirRetentionWhileTheFeederIsBehind() throws Exception {
        BsonDocument c = SessionConsistencyTest.order(800, OLD, "c");
        stack.orders().insertOne(c);
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored").isPresent();
        try (Evictor evictor = evictor(Clock.systemUTC(), Duration.ofSeconds(10))) {
            evictor.runPass();
        }
        assertThat(fence(800)).as("evicted").isEqualTo(Fence.Kind.EVICTION.name());
        stack.stopFeeder();
        // a write the feeder has not mirrored: an archive read of the collection must wait for it (the eviction alone
        // may already be mirrored, and then the archive holds everything a read must see)
        stack.orders().insertOne(SessionConsistencyTest.order(801, OLD, "unmirrored"));
        try {
            try (Evictor later = evictor(Clock.offset(Clock.systemUTC(), Duration.ofHours(1)), Duration.ofMillis(300))) {
                later.runPass();
            }
            assertThat(fence(800)).as("kept past its retention while the feeder is behind").isEqualTo(Fence.Kind.EVICTION.name());
            assertThatThrownBy(() -> readerOrders().find(Filters.eq("_id", 800)).first()).as("fenced: waits for the stopped feeder")
                    .isInstanceOfSatisfying(MongoException.class, e -> assertThat(e.getCode()).isEqualTo(262));
        } finally {
            stack.startFeeder();
        }
        try (Evictor later = evictor(Clock.offset(Clock.systemUTC(), Duration.ofHours(1)), Duration.ofSeconds(10))) {
            later.runPass();
        }
        assertThat(fence(800)).as("purged once mirrored").isNull();
        long skipped = stack.routing.readBarrierCounts().skipped();
        assertThat(readerOrders().find(Filters.eq("_id", 800)).first()).as("now without the barrier").isEqualTo(c);
        assertThat(stack.routing.readBarrierCounts().skipped()).isEqualTo(skipped + 1);
    }

    /** The count command with a point filter (the driver's countDocuments is an aggregation, not a point read). */
    private static int count(int id) {
        return otherClient.getDatabase(TieredStack.POLICY.database()).runCommand(new BsonDocument("count",
                new org.bson.BsonString(TieredStack.POLICY.collection())).append("query", new BsonDocument("_id", new BsonInt32(id))))
                .getInteger("n");
    }

    private static String fence(int id) {
        BsonDocument fence = stack.fastDirect.getDatabase(MetadataStore.DATABASE).getCollection(MetadataStore.FENCES, BsonDocument.class)
                .find(Filters.eq("_id", Fence.key(TieredStack.POLICY.namespace(), new BsonInt32(id)))).first();
        return fence == null ? null : fence.getString("kind").getValue();
    }

    private static Evictor evictor(Clock clock, Duration barrierTimeout) {
        return evictor(clock, barrierTimeout, FaultInjection.NONE);
    }

    private static Evictor evictor(Clock clock, Duration barrierTimeout, FaultInjection faults) {
        return new Evictor(stack.fastWorkers, stack.archiveWorkers, List.of(TieredStack.POLICY),
                new EvictorConfig(Duration.ofMillis(100), 50, 100_000), Evictor.Options.defaults()
                .withBoundPropagationDelay(Duration.ZERO).withBarrierTimeout(barrierTimeout).withClock(clock)
                .withRegistry(new PrometheusRegistry()).withFaults(faults));
    }
}
