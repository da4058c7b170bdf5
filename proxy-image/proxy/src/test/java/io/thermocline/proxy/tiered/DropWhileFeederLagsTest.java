package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
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
}
