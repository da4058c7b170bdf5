package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;

/**
 * The update-and-undo race with the evictor, played on a {@link TieredStack}: an update (c to c') is
 * mirrored, its undo (back to c) is not, and the evictor removes c with a fence that carries it. The
 * archive then holds c' until the feeder, started again, mirrors c from the fence.
 */
final class UndoRacingEviction {

    final MirrorBarrier barrier;
    private final TieredStack stack;
    private final OwnWrites evictorWrites;
    private final Fences fences;

    UndoRacingEviction(TieredStack stack, String name) {
        this.stack = stack;
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        this.barrier = new MirrorBarrier(stack.fastWorkers, store, name);
        this.evictorWrites = new OwnWrites(stack.fastWorkers, store, "evictor/" + name);
        this.fences = new Fences(store);
    }

    /** Document {@code id}, in the fast tier with {@code tag: "c"}, ends evicted at c, the archive at c', the feeder stopped. */
    void evictWithUndoNotMirrored(int id) throws InterruptedException {
        stack.fastOrders().updateOne(Filters.eq("_id", id), Updates.set("tag", "c'"));
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent(); // the archive holds c'
        stack.stopFeeder();
        stack.fastOrders().updateOne(Filters.eq("_id", id), Updates.set("tag", "c")); // the undo, not mirrored
        BsonDocument evicted = stack.fastOrders().find(Filters.eq("_id", id)).first();
        evictorWrites.inTransaction(session -> {
            fences.writeEviction(session, TieredStack.POLICY.namespace(), evicted);
            return Blocking.single(stack.fastWorkers
                            .getDatabase("shop")
                            .getCollection("orders", BsonDocument.class)
                            .deleteOne(session, Filters.eq("_id", id)))
                    .orElseThrow()
                    .getDeletedCount();
        });
        assertThat(stack.archiveOrders()
                        .find(Filters.eq("_id", id))
                        .first()
                        .getString("tag")
                        .getValue())
                .as("the archive's copy is stale")
                .isEqualTo("c'");
    }

    /**
     * Starts the feeder again, in the background, once the proxy waits for it at its sync barrier (its probe is
     * written), not after a delay hoping the operation under test read the archive first: so it met the stale copy
     * or waits for the feeder, whatever the machine's speed. Completes true then; false if no probe came within
     * 60 s (the feeder starts anyway, so the test's checks run: an operation that never waited met the stale copy).
     */
    CompletableFuture<Boolean> startFeederOnceTheProxyWaits() {
        long before = stack.syncBarrierProbes();
        return CompletableFuture.supplyAsync(() -> {
            try {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                boolean probed = false;
                while (!probed && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                    probed = stack.syncBarrierProbes() > before;
                }
                stack.startFeeder();
                return probed;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
