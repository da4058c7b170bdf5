package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Linearizable archive-routed reads whose namespaces have no unmirrored write pass without a probe or a
 * wait ({@code causal.UnmirroredWrites}, docs/consistency.md), and one that races a write acknowledged on
 * another proxy replica still sees it: the reading replica's stream of fast-tier writes is held after it
 * received the write and before it recorded it, with the feeder stopped so that a read that passed
 * would miss it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class QuietArchiveReadTest {

    private static final Instant OLD = Instant.now().minus(Duration.ofHours(3));
    private static final String READER_STREAM = "thermocline-writes-tiered-test-0";

    @Test
    void aWriteAcknowledgedOnAnotherReplicaJustBeforeTheReadIsSeen() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(90), Duration.ofMillis(5))) {
            AtomicBoolean armed = new AtomicBoolean();
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            stack.writeStreamReceived.set(() -> {
                if (Thread.currentThread().getName().equals(READER_STREAM) && armed.compareAndSet(true, false)) {
                    held.countDown();
                    await(release);
                }
            });
            ProxyServer writerProxy = stack.anotherProxy("tiered-test-1");
            for (int id = 1; id <= 3; id++) {
                stack.archiveOrders().insertOne(order(id, OLD.minusSeconds(id)));
            }
            stack.startFeeder();
            try (MongoClient writer = MongoClients.create("mongodb://127.0.0.1:" + writerProxy.port());
                 MongoClient reader = MongoClients.create("mongodb://127.0.0.1:" + stack.proxy.port())) {
                MongoCollection<BsonDocument> readerOrders = orders(reader);
                // nothing unmirrored: the count passes without probe or wait, once the feeder has passed the stream's start
                long quietBefore = stack.routing.readBarrierCounts().quiet();
                waitFor(() -> {
                    assertThat(readerOrders.countDocuments(Filters.eq("customer", "c1"))).isEqualTo(3);
                    return stack.routing.readBarrierCounts().quiet() > quietBefore;
                }, "a quiet read");
                assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "quiet-read-test")
                        .sync(Duration.ofSeconds(30))).as("everything mirrored").isPresent();
                stack.stopFeeder(); // from here on nothing reaches the archive

                armed.set(true);
                orders(writer).insertOne(order(4, Instant.now())); // acknowledged by the other replica, in the fast tier only
                assertThat(held.await(30, TimeUnit.SECONDS)).as("the reader's stream received the insert").isTrue();
                long streamWaitsBefore = stack.routing.readsThatWaitedForWriteStream();
                long feederWaitsBefore = stack.routing.readBarrierCounts().waitedForFeeder();
                CompletableFuture<Long> read = CompletableFuture.supplyAsync(() -> readerOrders.countDocuments(Filters.eq("customer", "c1")));
                waitFor(() -> read.isDone() || stack.routing.readsThatWaitedForWriteStream() > streamWaitsBefore, "the read at the barrier");
                assertThat(read).as("a read arriving after the insert was acknowledged, its stream behind it").isNotDone();

                release.countDown(); // the stream records the insert: the read now waits for the feeder to mirror it
                waitFor(() -> read.isDone() || stack.routing.readBarrierCounts().waitedForFeeder() > feederWaitsBefore, "the feeder wait");
                assertThat(read).as("the insert is not mirrored").isNotDone();
                stack.startFeeder();
                assertThat(read.get(60, TimeUnit.SECONDS)).as("the count sees the insert").isEqualTo(4);
            } finally {
                release.countDown();
            }
        }
    }

    private static BsonDocument order(int id, Instant createdAt) {
        return SessionConsistencyTest.order(id, createdAt, "new").append("customer", new BsonString("c1"));
    }

    private static MongoCollection<BsonDocument> orders(MongoClient client) {
        return client.getDatabase(TieredStack.POLICY.database()).getCollection(TieredStack.POLICY.collection(), BsonDocument.class);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within 60 s");
            }
            Thread.sleep(20);
        }
    }
}
