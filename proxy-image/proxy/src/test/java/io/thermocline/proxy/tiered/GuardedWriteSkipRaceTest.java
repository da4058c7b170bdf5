package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A guarded write of a document the fast tier lacks skips the sync barrier when no fence names it:
 * the archive then holds its latest version. The race: the document is evicted right after the write
 * read its (absent) fence, and the archive still holds an older version (an update and its undo raced
 * the eviction; the feeder mirrors the undo from the eviction fence only later). The write reads that
 * stale version without waiting; its transaction must see the eviction fence and start over, and the
 * next attempt waits for the feeder: the update applies to the acknowledged version.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GuardedWriteSkipRaceTest {

    static final Instant NOW = Instant.now();
    TieredStack stack;
    MirrorBarrier barrier;
    OwnWrites evictorWrites;
    Fences fences;

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        barrier = new MirrorBarrier(stack.fastWorkers, store, "guarded-skip-race-test");
        evictorWrites = new OwnWrites(stack.fastWorkers, store, "evictor/guarded-skip-race-test");
        fences = new Fences(store);
        stack.startFeeder();
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    @Test
    void aWriteThatSkippedTheBarrierAndReadAStaleArchiveCopyStartsOverAndUpdatesTheLatestVersion() throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(5, NOW.minus(Duration.ofHours(3)), "cold").append("tag", new BsonString("c"));
        stack.fastOrders().insertOne(cold);
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        AtomicBoolean raced = new AtomicBoolean();
        stack.writeRaces.set(point -> {
            if (point != WriteRaces.Point.GUARDED_WRITE_FENCES_READ || !raced.compareAndSet(false, true)) {
                return;
            }
            try {
                stack.fastOrders().updateOne(Filters.eq("_id", 5), Updates.set("tag", "c'"));
                assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent(); // the archive holds c'
                stack.stopFeeder();
                stack.fastOrders().updateOne(Filters.eq("_id", 5), Updates.set("tag", "c")); // the undo, not mirrored
                BsonDocument evicted = stack.fastOrders().find(Filters.eq("_id", 5)).first();
                evictorWrites.inTransaction(session -> {
                    fences.writeEviction(session, TieredStack.POLICY.namespace(), evicted);
                    return Blocking.single(stack.fastWorkers.getDatabase("shop").getCollection("orders", BsonDocument.class)
                            .deleteOne(session, Filters.eq("_id", 5))).orElseThrow().getDeletedCount();
                });
                assertThat(stack.archiveOrders().find(Filters.eq("_id", 5)).first().getString("tag").getValue())
                        .as("the archive's copy is stale").isEqualTo("c'");
                CompletableFuture.runAsync(() -> {
                    try {
                        Thread.sleep(1000); // after the write's first attempt read the archive
                        stack.startFeeder();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(stack.orders().updateOne(Filters.eq("_id", 5), Updates.set("paid", true)).getModifiedCount()).isOne();
        assertThat(raced).as("the eviction ran inside the write").isTrue();
        BsonDocument read = stack.orders().find(Filters.eq("_id", 5)).first();
        assertThat(read.getString("tag").getValue()).as("the update applied to the acknowledged version: %s", read).isEqualTo("c");
        assertThat(read.getBoolean("paid").getValue()).isTrue();
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        BsonDocument archived = stack.archiveOrders().find(Filters.eq("_id", 5)).first();
        assertThat(archived.getString("tag").getValue()).as("mirrored: %s", archived).isEqualTo("c");
    }
}
