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
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A delete whose filter names fields other than {@code _id} must match the version the fast tier
 * acknowledged last, also for a document evicted while the archive still holds an older version: an
 * update (c to c') mirrored, its undo (back to c) not yet, and the evictor removed c (its fence carries
 * c; the feeder mirrors it from there later). A primary holding c deletes it for {@code {tag: "c"}}; so
 * must the proxy, and the archive must end without the document.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeleteAfterEvictionRaceTest {

    static final Instant NOW = Instant.now();
    TieredStack stack;
    MirrorBarrier barrier;
    OwnWrites evictorWrites;
    Fences fences;

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        barrier = new MirrorBarrier(stack.fastWorkers, store, "delete-eviction-race-test");
        evictorWrites = new OwnWrites(stack.fastWorkers, store, "evictor/delete-eviction-race-test");
        fences = new Fences(store);
        stack.startFeeder();
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    @Test
    void aDeleteOneByAnotherFieldMatchesTheAcknowledgedVersionOfAnEvictedDocument() throws Exception {
        evictWithUndoNotMirrored(5);
        resumeFeederSoon();
        assertThat(stack.orders().deleteOne(Filters.eq("tag", "c")).getDeletedCount())
                .as("the acknowledged version has tag c").isOne();
        assertGoneFromBothTiers(5);
    }

    @Test
    void aDeleteManyByAnotherFieldMatchesTheAcknowledgedVersionOfAnEvictedDocument() throws Exception {
        evictWithUndoNotMirrored(6);
        resumeFeederSoon();
        assertThat(stack.orders().deleteMany(Filters.eq("tag", "c")).getDeletedCount()).isOne();
        assertGoneFromBothTiers(6);
    }

    /** Leaves document {@code id} evicted at version c, the archive at c', and the feeder stopped. */
    private void evictWithUndoNotMirrored(int id) throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(id, NOW.minus(Duration.ofHours(3)), "cold").append("tag", new BsonString("c"));
        stack.fastOrders().insertOne(cold);
        stack.fastOrders().updateOne(Filters.eq("_id", id), Updates.set("tag", "c'"));
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent(); // the archive holds c'
        stack.stopFeeder();
        stack.fastOrders().updateOne(Filters.eq("_id", id), Updates.set("tag", "c")); // the undo, not mirrored
        BsonDocument evicted = stack.fastOrders().find(Filters.eq("_id", id)).first();
        evictorWrites.inTransaction(session -> {
            fences.writeEviction(session, TieredStack.POLICY.namespace(), evicted);
            return Blocking.single(stack.fastWorkers.getDatabase("shop").getCollection("orders", BsonDocument.class)
                    .deleteOne(session, Filters.eq("_id", id))).orElseThrow().getDeletedCount();
        });
        assertThat(stack.archiveOrders().find(Filters.eq("_id", id)).first().getString("tag").getValue())
                .as("the archive's copy is stale").isEqualTo("c'");
    }

    private void resumeFeederSoon() {
        CompletableFuture.runAsync(() -> {
            try {
                Thread.sleep(1000);
                stack.startFeeder();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private void assertGoneFromBothTiers(int id) throws Exception {
        assertThat(stack.orders().find(Filters.eq("_id", id)).first()).as("read through the proxy").isNull();
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", id)).first()).as("the archive's copy").isNull();
        assertThat(stack.fastOrders().find(Filters.eq("_id", id)).first()).as("the fast tier's").isNull();
    }
}
