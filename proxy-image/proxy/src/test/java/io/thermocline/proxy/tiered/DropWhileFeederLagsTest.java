package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.model.Filters;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.worker.FaultPoint;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code drop} / {@code dropDatabase} of a tiered collection while the feeder has not mirrored the
 * latest inserts yet: once the drop is acknowledged, no document written before it may come back in
 * either tier when the feeder catches up.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DropWhileFeederLagsTest {

    static final Instant NOW = Instant.now();

    private static List<BsonDocument> orders(int from, int count) {
        List<BsonDocument> docs = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            docs.add(SessionConsistencyTest.order(i, NOW.minus(Duration.ofMinutes(i % 120)), "before-drop"));
        }
        return docs;
    }

    private static void dropWhileTheFeederIsDown(TieredStack stack, Runnable drop) throws Exception {
        stack.startFeeder();
        stack.archiveOrders().insertMany(orders(1, 20)); // cold documents, archive only
        stack.orders().insertMany(orders(100, 50)); // mirrored
        assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test").sync(Duration.ofSeconds(10)))
                .isPresent();
        stack.stopFeeder();
        stack.orders().insertMany(orders(200, 50)); // acknowledged, not mirrored yet
        CompletableFuture<Void> dropped = CompletableFuture.runAsync(drop);
        Thread.sleep(300);
        stack.startFeeder(); // the feeder comes back while (or after) the drop runs
        dropped.get(30, TimeUnit.SECONDS);
        assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test").sync(Duration.ofSeconds(10)))
                .isPresent();
        assertThat(stack.archiveOrders().countDocuments()).as("documents in the archive after the drop").isZero();
        assertThat(stack.fastOrders().countDocuments()).as("documents in the fast tier after the drop").isZero();
        assertThat(stack.orders().countDocuments(Filters.eq("state", "before-drop"))).as("through the proxy").isZero();
    }

    @Test
    void dropWhileTheFeederLagsResurrectsNothing() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            dropWhileTheFeederIsDown(stack, () -> stack.orders().drop());
        }
    }

    @Test
    void dropDatabaseWhileTheFeederLagsResurrectsNothing() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            dropWhileTheFeederIsDown(stack, () -> stack.client.getDatabase(TieredStack.POLICY.database()).drop());
        }
    }

    /** A warm copy (or promotion) that read the archive just before a drop must not bring the dropped documents back. */
    @Test
    void aCopyUpThatReadTheArchiveBeforeADropCopiesNothing() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            stack.startFeeder();
            stack.archiveOrders().insertMany(orders(1, 5)); // archive only, as before a warm-up
            MetadataStore store = new MetadataStore(stack.fastWorkers);
            AtomicBoolean dropped = new AtomicBoolean();
            CopyUp copyUp = new CopyUp(stack.fastWorkers, stack.archiveWorkers, store, new OwnWrites(stack.fastWorkers, store, "warmer/drop-test"),
                    new MirrorBarrier(stack.fastWorkers, store, "drop-test"), Duration.ofSeconds(10), Duration.ofMinutes(10), point -> {
                        if (point == FaultPoint.WARMER_BEFORE_COPY && dropped.compareAndSet(false, true)) {
                            stack.orders().drop(); // the application drops the collection between the copy's archive read and its write
                        }
                    });
            List<BsonValue> ids = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                ids.add(new BsonInt32(i));
            }
            CopyUp.Result result = copyUp.copy(TieredStack.POLICY.namespace(), ids);
            assertThat(dropped).isTrue();
            assertThat(result.copied()).as("documents copied after the drop").isZero();
            assertThat(result.count(CopyUpDecision.SKIP_NAMESPACE_DROPPED)).isEqualTo(5);
            assertThat(stack.fastOrders().countDocuments()).as("documents in the fast tier after the drop").isZero();
            assertThat(stack.orders().find(Filters.eq("_id", 1)).first()).as("a point read through the proxy").isNull();
            // a later copy, after the drop, is not blocked: the drop is done
            stack.archiveOrders().insertOne(SessionConsistencyTest.order(9, NOW.minus(Duration.ofHours(2)), "after-drop"));
            assertThat(copyUp.copy(TieredStack.POLICY.namespace(), List.of(new BsonInt32(9))).copied()).isOne();
        }
    }

    /** renameCollection cannot be one step over two tiers and a lagging feeder: refused, and nothing moves. */
    @Test
    void renameOfATieredCollectionIsRefusedAndChangesNothing() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            stack.startFeeder();
            stack.orders().insertMany(orders(100, 5));
            stack.stopFeeder();
            stack.orders().insertMany(orders(200, 5)); // not mirrored yet
            MongoCommandException refused = catchThrowableOfType(() -> stack.orders().renameCollection(new MongoNamespace("shop", "orders2")),
                    MongoCommandException.class);
            assertThat(refused).isNotNull();
            assertThat(refused.getErrorMessage()).contains("renameCollection").contains("shop.orders");
            assertThat(stack.fastOrders().countDocuments()).isEqualTo(10);
            assertThat(stack.fastDirect.getDatabase("shop").getCollection("orders2").countDocuments()).isZero();
            assertThat(stack.archiveDirect.getDatabase("shop").getCollection("orders2").countDocuments()).isZero();
            stack.startFeeder();
            assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test").sync(Duration.ofSeconds(10)))
                    .isPresent();
            assertThat(stack.archiveOrders().countDocuments()).as("every write mirrored to the original collection").isEqualTo(10);
        }
    }
}
