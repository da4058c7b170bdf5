package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
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
    private static final String SPECULATED =
            "thermocline_proxy_read_barrier_total{mode=\"linearizable\",outcome=\"speculated\"}";
    private static final String OPEN_CURSORS = "thermocline_proxy_open_cursors ";

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
                // nothing unmirrored: the count passes without probe or wait, once the feeder has passed the stream's
                // start
                long quietBefore = passedAtOnce(stack);
                waitFor(
                        () -> {
                            assertThat(readerOrders.countDocuments(Filters.eq("customer", "c1")))
                                    .isEqualTo(3);
                            return passedAtOnce(stack) > quietBefore;
                        },
                        "a quiet read");
                assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "quiet-read-test")
                                .sync(Duration.ofSeconds(30)))
                        .as("everything mirrored")
                        .isPresent();
                stack.stopFeeder(); // from here on nothing reaches the archive

                armed.set(true);
                orders(writer)
                        .insertOne(order(4, Instant.now())); // acknowledged by the other replica, in the fast tier only
                assertThat(held.await(30, TimeUnit.SECONDS))
                        .as("the reader's stream received the insert")
                        .isTrue();
                long streamWaitsBefore = stack.routing.readsThatWaitedForWriteStream();
                long feederWaitsBefore = stack.routing.readBarrierCounts().waitedForFeeder();
                CompletableFuture<Long> read =
                        CompletableFuture.supplyAsync(() -> readerOrders.countDocuments(Filters.eq("customer", "c1")));
                waitFor(
                        () -> read.isDone() || stack.routing.readsThatWaitedForWriteStream() > streamWaitsBefore,
                        "the read at the barrier");
                assertThat(read)
                        .as("a read arriving after the insert was acknowledged, its stream behind it")
                        .isNotDone();

                release.countDown(); // the stream records the insert: the read now waits for the feeder to mirror it
                waitFor(
                        () -> read.isDone() || stack.routing.readBarrierCounts().waitedForFeeder() > feederWaitsBefore,
                        "the feeder wait");
                assertThat(read).as("the insert is not mirrored").isNotDone();
                stack.startFeeder();
                assertThat(read.get(60, TimeUnit.SECONDS))
                        .as("the count sees the insert")
                        .isEqualTo(4);
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void anIdleReadKeepsTheArchiveAnswerAskedWhileThePresentIsReadWritingAndWaitingForNothing() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(90), Duration.ofMillis(5))) {
            for (int id = 1; id <= 3; id++) {
                stack.archiveOrders().insertOne(order(id, OLD.minusSeconds(id)));
            }
            stack.startFeeder();
            MongoCollection<BsonDocument> orders = stack.orders();
            long speculatedBefore = stack.routing.readBarrierCounts().speculated();
            waitFor(
                    () -> {
                        assertThat(orders.countDocuments(Filters.eq("customer", "c1")))
                                .isEqualTo(3);
                        return stack.routing.readBarrierCounts().speculated() > speculatedBefore;
                    },
                    "a speculated read (once the feeder has passed the stream's start)");

            ReadBarrier.Counts before = stack.routing.readBarrierCounts();
            long probesBefore = readProbes(stack);
            double metricBefore = metric(stack.proxy, SPECULATED);
            assertThat(orders.countDocuments(Filters.eq("customer", "c1"))).isEqualTo(3);
            MongoDatabase shop = stack.client.getDatabase(TieredStack.POLICY.database());
            BsonDocument first = shop.runCommand(
                    new BsonDocument("find", new BsonString(TieredStack.POLICY.collection()))
                            .append("filter", new BsonDocument("customer", new BsonString("c1")))
                            .append("sort", new BsonDocument("_id", new BsonInt32(1)))
                            .append("batchSize", new BsonInt32(2)),
                    BsonDocument.class);
            BsonDocument cursor = first.getDocument("cursor");
            assertThat(cursor.getInt64("id").longValue())
                    .as("the kept answer's cursor")
                    .isNotZero();
            BsonDocument more = shop.runCommand(
                    new BsonDocument("getMore", cursor.getInt64("id"))
                            .append("collection", new BsonString(TieredStack.POLICY.collection())),
                    BsonDocument.class);
            assertThat(more.getDocument("cursor").getArray("nextBatch"))
                    .extracting(d -> d.asDocument().getInt32("_id").getValue())
                    .containsExactly(3);
            assertThat(more.get("operationTime"))
                    .as("the getMore answered as a tiered archive cursor's: the fast-tier time its first batch carried")
                    .isEqualTo(first.get("operationTime"));

            ReadBarrier.Counts after = stack.routing.readBarrierCounts();
            assertThat(after)
                    .as("both reads kept their speculative answer; none quiet, probed, waited or dropped")
                    .isEqualTo(new ReadBarrier.Counts(
                            before.immediate(),
                            before.probed(),
                            before.waitedForFeeder(),
                            before.timedOut(),
                            before.skipped(),
                            before.quiet(),
                            before.speculated() + 2,
                            before.speculationsDropped()));
            assertThat(readProbes(stack)).as("no probe written").isEqualTo(probesBefore);
            assertThat(metric(stack.proxy, SPECULATED)).isEqualTo(metricBefore + 2);
        }
    }

    @Test
    void aSpeculativeAnswerThatMissedAWriteAcknowledgedOnAnotherReplicaIsDroppedAndItsCursorKilled() throws Exception {
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
                long speculatedBefore = stack.routing.readBarrierCounts().speculated();
                waitFor(
                        () -> {
                            assertThat(readerOrders.countDocuments(Filters.eq("customer", "c1")))
                                    .isEqualTo(3);
                            return stack.routing.readBarrierCounts().speculated() > speculatedBefore;
                        },
                        "a speculated read");
                assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "quiet-read-test")
                                .sync(Duration.ofSeconds(30)))
                        .as("everything mirrored")
                        .isPresent();
                stack.stopFeeder(); // from here on nothing reaches the archive

                armed.set(true);
                orders(writer)
                        .insertOne(order(4, Instant.now())); // acknowledged by the other replica, in the fast tier only
                assertThat(held.await(30, TimeUnit.SECONDS))
                        .as("the reader's stream received the insert")
                        .isTrue();
                long streamWaitsBefore = stack.routing.readsThatWaitedForWriteStream();
                ReadBarrier.Counts before = stack.routing.readBarrierCounts();
                long killedBefore = stack.routing.speculativeCursorsKilled();
                double openBefore = metric(stack.proxy, OPEN_CURSORS);
                CompletableFuture<List<Integer>> read = CompletableFuture.supplyAsync(() -> readerOrders
                        .find(Filters.eq("customer", "c1"))
                        .batchSize(2)
                        .map(d -> d.getInt32("_id").getValue())
                        .into(new ArrayList<>()));
                // the archive answered (without the insert: its cursor is open on the proxy) while the read waits for
                // its stream to reach the fast tier's present
                waitFor(
                        () -> read.isDone()
                                || stack.routing.readsThatWaitedForWriteStream() > streamWaitsBefore
                                        && metric(stack.proxy, OPEN_CURSORS) > openBefore,
                        "the speculative answer back, the read at its stream");
                assertThat(read)
                        .as("a read arriving after the insert was acknowledged, its stream behind it")
                        .isNotDone();
                assertThat(stack.routing.readBarrierCounts().speculationsDropped())
                        .isEqualTo(before.speculationsDropped());

                release.countDown(); // the stream records the insert: the answer is dropped, the read waits for the
                // feeder
                waitFor(
                        () -> read.isDone()
                                || stack.routing.readBarrierCounts().waitedForFeeder() > before.waitedForFeeder()
                                        && stack.routing.speculativeCursorsKilled() > killedBefore,
                        "the dropped answer's cursor killed on the archive, the read at the feeder wait",
                        () -> stack.routing.readBarrierCounts() + " cursors killed "
                                + stack.routing.speculativeCursorsKilled() + ", open "
                                + metric(stack.proxy, OPEN_CURSORS));
                assertThat(read).as("the insert is not mirrored").isNotDone();
                ReadBarrier.Counts dropped = stack.routing.readBarrierCounts();
                assertThat(dropped.speculationsDropped()).isEqualTo(before.speculationsDropped() + 1);
                assertThat(dropped.speculated()).as("nothing kept").isEqualTo(before.speculated());
                stack.startFeeder();
                assertThat(read.get(60, TimeUnit.SECONDS))
                        .as("the find sees the insert")
                        .containsExactlyInAnyOrder(1, 2, 3, 4);
            } finally {
                release.countDown();
            }
        }
    }

    /** Reads that passed at once: quiet, or keeping the archive answer asked while the present was read. */
    private static long passedAtOnce(TieredStack stack) {
        ReadBarrier.Counts c = stack.routing.readBarrierCounts();
        return c.quiet() + c.speculated();
    }

    /** How many probes the proxy's read barrier wrote ({@code thermocline.probes}, its reads' own document). */
    private static long readProbes(TieredStack stack) {
        BsonDocument probe = stack.fastDirect
                .getDatabase(MetadataStore.DATABASE)
                .getCollection(MetadataStore.PROBES, BsonDocument.class)
                .find(Filters.eq("_id", "proxy/tiered-test-0/reads"))
                .first();
        return probe == null ? 0 : probe.getNumber("seq").longValue();
    }

    /** The value of the proxy's metric line starting with {@code prefix}, 0 when absent. */
    private static double metric(ProxyServer proxy, String prefix) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            proxy.metrics().writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith(prefix)) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    private static BsonDocument order(int id, Instant createdAt) {
        return SessionConsistencyTest.order(id, createdAt, "new").append("customer", new BsonString("c1"));
    }

    private static MongoCollection<BsonDocument> orders(MongoClient client) {
        return client.getDatabase(TieredStack.POLICY.database())
                .getCollection(TieredStack.POLICY.collection(), BsonDocument.class);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        waitFor(condition, what, () -> "");
    }

    /** As above; {@code state} says where things stood when the wait ran out. */
    private static void waitFor(BooleanSupplier condition, String what, Supplier<Object> state)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within 60 s " + state.get());
            }
            Thread.sleep(20);
        }
    }
}
