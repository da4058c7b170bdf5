package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Copy-ups (read-through promotion, the warmer, write-through promotion) of documents no fence names skip
 * the sync barrier (proof in docs/consistency.md, "Copy-ups that skip the barrier"). Checked with the
 * feeder stopped, so a copy that skipped wrongly would bring the archive's stale version (or a deleted
 * document) into the fast tier, and on the interleavings where only a fence written after the copy's
 * fence read stands between the skip and a stale copy: an eviction of an update's undo (c, c', c), a
 * user update and a user delete, each run at the copy's fault points.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CopyUpSkipRaceTest {

    static final String NS = TieredStack.POLICY.namespace();
    static TieredStack stack;
    static MirrorBarrier barrier;
    static OwnWrites evictorWrites;
    static Fences fences;
    static CopyUp copyUp;
    static final AtomicReference<FaultInjection> faults = new AtomicReference<>(FaultInjection.NONE);

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(1), Duration.ofMillis(5));
        stack.startFeeder();
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        barrier = new MirrorBarrier(stack.fastWorkers, store, "copy-up-skip-race-test");
        evictorWrites = new OwnWrites(stack.fastWorkers, store, "evictor/copy-up-skip-race-test");
        fences = new Fences(store);
        copyUp = new CopyUp(
                stack.fastWorkers,
                stack.archiveWorkers,
                store,
                new OwnWrites(stack.fastWorkers, store, "proxy/copy-up-skip-race-test"),
                barrier,
                Duration.ofSeconds(1),
                Duration.ofMinutes(10),
                point -> faults.get().reached(point));
    }

    @AfterEach
    void restartFeeder() throws Exception {
        faults.set(FaultInjection.NONE);
        stack.stopFeeder();
        stack.startFeeder();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Inside the 1 h hot window: a point read promotes it. */
    private static BsonDocument hot(int id, String state) {
        return SessionConsistencyTest.order(id, Instant.now().minus(Duration.ofMinutes(10)), state);
    }

    private static BsonDocument inFast(int id) {
        return stack.fastOrders().find(Filters.eq("_id", id)).first();
    }

    private static BsonDocument inArchive(int id) {
        return stack.archiveOrders().find(Filters.eq("_id", id)).first();
    }

    private static void mirrored() throws InterruptedException {
        assertThat(barrier.sync(Duration.ofSeconds(10)))
                .as("the feeder mirrored")
                .isPresent();
    }

    /** Evicts the fast tier's version of {@code id} as the evictor does: its fence carries the removed version. */
    private static void evict(int id) {
        BsonDocument evicted = inFast(id);
        evictorWrites.inTransaction(session -> {
            fences.writeEviction(session, NS, evicted);
            return Blocking.single(stack.fastWorkers
                            .getDatabase("shop")
                            .getCollection("orders", BsonDocument.class)
                            .deleteOne(session, Filters.eq("_id", id)))
                    .orElseThrow()
                    .getDeletedCount();
        });
    }

    /** (a) The benchmark's case: the feeder is far behind, and a point read of a cold document still promotes it. */
    @Test
    void aPointReadPromotesAnUnfencedColdDocumentWhileTheFeederIsStopped() throws Exception {
        BsonDocument cold = hot(10, "archived");
        stack.archiveOrders().insertOne(cold);
        stack.stopFeeder();
        CopyUp.BarrierCounts before = stack.routing.copyUpBarrierCounts();
        assertThat(stack.orders().find(Filters.eq("_id", 10)).first())
                .as("read from the archive")
                .isEqualTo(cold);
        // the promotion runs in the background: wait for its copy however slow the machine is; what proves it did not
        // wait for the (stopped) feeder is the barrier's counts, not how soon it came
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (inFast(10) == null) {
            assertThat(System.nanoTime())
                    .as("promoted without the feeder: %s", stack.routing.copyUpBarrierCounts())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
        assertThat(inFast(10)).isEqualTo(cold);
        CopyUp.BarrierCounts after = stack.routing.copyUpBarrierCounts();
        assertThat(after.skipped() - before.skipped())
                .as("promotions that skipped the barrier")
                .isEqualTo(1);
        assertThat(after.waited() - before.waited())
                .as("promotions that waited for the feeder")
                .isZero();
        assertThat(after.timedOut() - before.timedOut())
                .as("promotions that gave up on the feeder")
                .isZero();
        assertThat(stack.orders().find(Filters.eq("_id", 10)).first())
                .as("now from the fast tier")
                .isEqualTo(cold);
    }

    /**
     * (b) A user deleted the document and the feeder has not mirrored the delete: the archive still holds it,
     * its tombstone stands. A batch with it and an unfenced document copies the unfenced one at once, and
     * never the deleted one, whether it leaves it out or waits for the (stopped) feeder.
     */
    @Test
    void aUserDeletedDocumentIsNotResurrectedWhileTheUnfencedRestOfItsBatchIsCopied() throws Exception {
        stack.archiveOrders().insertMany(List.of(hot(20, "deleted"), hot(21, "archived"), hot(22, "archived")));
        stack.stopFeeder();
        assertThat(stack.orders().deleteOne(Filters.eq("_id", 20)).getDeletedCount())
                .isOne();
        assertThat(inArchive(20)).as("the delete is not mirrored").isNotNull();

        CopyUp.Result leave = copyUp.copy(NS, ids(20, 21), CopyUp.Fenced.LEAVE);
        assertThat(leave.copied()).as("the unfenced one").isOne();
        assertThat(leave.fencedLeft()).isOne();
        CopyUp.Result wait = copyUp.copy(NS, ids(20, 22), CopyUp.Fenced.WAIT);
        assertThat(wait.copied()).as("the unfenced one").isOne();
        assertThat(wait.feederBehind())
                .as("the deleted one waits for the feeder, which is stopped")
                .isTrue();
        assertThat(inFast(20)).as("not resurrected").isNull();
        assertThat(inFast(21)).isEqualTo(inArchive(21));
        assertThat(inFast(22)).isNotNull();
        assertThat(stack.orders().find(Filters.eq("_id", 20)).first())
                .as("deleted, read through the proxy")
                .isNull();

        stack.startFeeder();
        mirrored();
        assertThat(copyUp.copy(NS, ids(20), CopyUp.Fenced.WAIT).count(CopyUpDecision.SKIP_NOT_IN_ARCHIVE))
                .isOne();
        assertThat(inFast(20)).isNull();
        assertThat(stack.orders().find(Filters.eq("_id", 20)).first())
                .as("still deleted")
                .isNull();
    }

    /**
     * (c) The document is in the fast tier (content c) and unfenced when the copy reads its fence; then an
     * update c' is mirrored, its undo c is not, and the evictor removes c (fence carrying c). The copy
     * skipped the barrier and read c' from the archive: its transaction must see the eviction fence and
     * copy nothing, else the fast tier would serve c' for an acknowledged c.
     */
    @Test
    void aCopyThatSkippedTheBarrierDoesNotBringBackAStaleVersionOfADocumentEvictedMeanwhile() throws Exception {
        BsonDocument c = hot(30, "c");
        stack.orders().insertOne(c);
        mirrored();
        AtomicBoolean raced = new AtomicBoolean();
        faults.set(point -> {
            if (point != FaultPoint.COPY_UP_FENCES_READ || !raced.compareAndSet(false, true)) {
                return;
            }
            try {
                stack.fastOrders().updateOne(Filters.eq("_id", 30), Updates.set("state", "c'"));
                mirrored(); // the archive holds c'
                stack.stopFeeder();
                stack.fastOrders()
                        .updateOne(Filters.eq("_id", 30), Updates.set("state", "c")); // the undo, not mirrored
                evict(30);
                assertThat(inArchive(30).getString("state").getValue())
                        .as("the archive's copy is stale")
                        .isEqualTo("c'");
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        CopyUp.Result result = copyUp.copy(NS, ids(30), CopyUp.Fenced.WAIT);
        assertThat(raced).as("the eviction ran inside the copy").isTrue();
        assertThat(result.feederBehind())
                .as("it was unfenced at the fence read: no barrier")
                .isFalse();
        assertThat(result.count(CopyUpDecision.SKIP_DELETED_SINCE_READ))
                .as("the eviction fence stops it: %s", result)
                .isOne();
        assertThat(inFast(30)).as("c' not copied up").isNull();

        // while the eviction fence stands, later copies wait for the feeder, which then mirrors c from the fence
        CopyUp.Result fenced = copyUp.copy(NS, ids(30), CopyUp.Fenced.WAIT);
        assertThat(fenced.feederBehind()).isTrue();
        assertThat(inFast(30)).isNull();
        stack.startFeeder();
        mirrored();
        assertThat(inArchive(30).getString("state").getValue())
                .as("the feeder mirrored the undo from the fence")
                .isEqualTo("c");
        assertThat(copyUp.copy(NS, ids(30), CopyUp.Fenced.WAIT).copied()).isOne();
        assertThat(inFast(30).getString("state").getValue()).isEqualTo("c");
        assertThat(stack.orders()
                        .find(Filters.eq("_id", 30))
                        .first()
                        .getString("state")
                        .getValue())
                .isEqualTo("c");
    }

    /**
     * (d) A user write lands between the copy's archive read (no barrier: unfenced) and its transaction,
     * with the feeder stopped so the archive never sees it: an update through the proxy (which copies the
     * document up itself) must not be overwritten, a delete through the proxy must not be undone.
     */
    @Test
    void aUserWriteBetweenTheArchiveReadAndTheCopyTransactionWins() throws Exception {
        stack.archiveOrders().insertMany(List.of(hot(40, "archived"), hot(41, "archived")));
        stack.stopFeeder();
        raceAtCopy(() -> assertThat(stack.orders()
                        .updateOne(Filters.eq("_id", 40), Updates.set("state", "paid"))
                        .getModifiedCount())
                .isOne());
        CopyUp.Result updated = copyUp.copy(NS, ids(40), CopyUp.Fenced.WAIT);
        assertThat(updated.count(CopyUpDecision.SKIP_FAST_TIER_HAS_IT))
                .as("%s", updated)
                .isOne();
        assertThat(inFast(40).getString("state").getValue())
                .as("the update stands")
                .isEqualTo("paid");
        assertThat(inArchive(40).getString("state").getValue())
                .as("not mirrored")
                .isEqualTo("archived");

        raceAtCopy(
                () -> assertThat(stack.orders().deleteOne(Filters.eq("_id", 41)).getDeletedCount())
                        .isOne());
        CopyUp.Result deleted = copyUp.copy(NS, ids(41), CopyUp.Fenced.WAIT);
        assertThat(deleted.count(CopyUpDecision.SKIP_DELETED_SINCE_READ))
                .as("%s", deleted)
                .isOne();
        assertThat(inFast(41)).as("not resurrected").isNull();
        assertThat(inArchive(41)).as("the delete is not mirrored").isNotNull();
        assertThat(stack.orders().find(Filters.eq("_id", 41)).first()).isNull();
        assertThat(stack.orders()
                        .find(Filters.eq("_id", 40))
                        .first()
                        .getString("state")
                        .getValue())
                .isEqualTo("paid");
    }

    /**
     * (e) A promotion that reuses a point read's archive answer ({@link CopyUp#copyRead}: the read found no fence
     * and no drop fence first) with a user write, then a drop, between that read and the copy transaction.
     */
    @Test
    void aCopyOfAPointReadsAnswerLosesToWritesAndDropsAfterTheRead() throws Exception {
        stack.archiveOrders().insertMany(List.of(hot(50, "archived"), hot(51, "archived"), hot(52, "archived")));
        stack.stopFeeder();
        long fencesRead = System.nanoTime(); // the point read's fence read: nothing names 50-52
        BsonDocument read50 = inArchive(50);
        BsonDocument read51 = inArchive(51);
        raceAtCopy(() -> assertThat(stack.orders()
                        .updateOne(Filters.eq("_id", 50), Updates.set("state", "paid"))
                        .getModifiedCount())
                .isOne());
        CopyUp.Result updated = copyUp.copyRead(NS, List.of(read50), fencesRead);
        assertThat(updated.count(CopyUpDecision.SKIP_FAST_TIER_HAS_IT))
                .as("%s", updated)
                .isOne();
        assertThat(inFast(50).getString("state").getValue()).isEqualTo("paid");

        raceAtCopy(
                () -> assertThat(stack.orders().deleteOne(Filters.eq("_id", 51)).getDeletedCount())
                        .isOne());
        CopyUp.Result deleted = copyUp.copyRead(NS, List.of(read51), fencesRead);
        assertThat(deleted.count(CopyUpDecision.SKIP_DELETED_SINCE_READ))
                .as("%s", deleted)
                .isOne();
        assertThat(inFast(51)).as("not resurrected").isNull();

        BsonDocument read52 = inArchive(52);
        fences.writeDrop(NS, Fence.Kind.DROP_STARTED); // a drop began after the read
        try {
            CopyUp.Result dropped = copyUp.copyRead(NS, List.of(read52), fencesRead);
            assertThat(dropped.count(CopyUpDecision.SKIP_NAMESPACE_DROPPED))
                    .as("%s", dropped)
                    .isOne();
            assertThat(inFast(52)).isNull();
        } finally {
            stack.fastDirect
                    .getDatabase(MetadataStore.DATABASE)
                    .getCollection(MetadataStore.FENCES)
                    .deleteOne(Filters.eq("_id", Fence.key(NS, Fence.namespaceId())));
        }
    }

    private static void raceAtCopy(Runnable write) {
        AtomicBoolean raced = new AtomicBoolean();
        faults.set(point -> {
            if (point == FaultPoint.WARMER_BEFORE_COPY && raced.compareAndSet(false, true)) {
                write.run();
            }
        });
    }

    private static List<BsonValue> ids(int... ids) {
        return java.util.Arrays.stream(ids).<BsonValue>mapToObj(BsonInt32::new).toList();
    }
}
