package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * User deletes racing copy-ups (warm copies, read-through promotions) for real: the copies run in
 * other threads through the workers' own {@link CopyUp} while the delete goes through the proxy.
 * A deleted document must stay deleted, and the delete's {@code n} must count what it deleted.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DeleteCopyUpRaceTest {

    static TieredStack stack;
    static CopyUp copyUp;
    static MirrorBarrier barrier;
    static final Instant NOW = Instant.now();
    static final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        barrier = new MirrorBarrier(stack.fastWorkers, store, "race-test");
        copyUp = new CopyUp(stack.fastWorkers, stack.archiveWorkers, store, new OwnWrites(stack.fastWorkers, store, "warmer/race-test"),
                barrier, Duration.ofSeconds(10), Duration.ofMinutes(10), FaultInjection.NONE);
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        stack.close();
    }

    private static BsonDocument doc(int id, String tag) {
        return SessionConsistencyTest.order(id, NOW.minus(Duration.ofMinutes(10)), "cold").append("tag", new BsonString(tag));
    }

    private static long survivors(String tag) throws InterruptedException {
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        return stack.orders().countDocuments(Filters.eq("tag", tag)) + stack.fastOrders().countDocuments(Filters.eq("tag", tag));
    }

    /** Warm-up copying batches of archived documents while the application deletes them all. */
    @Test
    void deleteManyDuringWarmCopiesLeavesNothingAlive() throws Exception {
        int rounds = 6;
        int perRound = 120;
        long alive = 0;
        List<Long> counts = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            String tag = "warm-" + round;
            List<BsonDocument> docs = new ArrayList<>();
            for (int i = 0; i < perRound; i++) {
                docs.add(doc(100_000 + round * 1000 + i, tag));
            }
            stack.archiveOrders().insertMany(docs);
            CountDownLatch go = new CountDownLatch(1);
            int delay = 5 + round * 7;
            CompletableFuture<Void> warm = CompletableFuture.runAsync(() -> {
                await(go);
                for (int from = 0; from < perRound; from += 10) {
                    List<BsonValue> ids = new ArrayList<>();
                    docs.subList(from, from + 10).forEach(d -> ids.add(d.get("_id")));
                    try {
                        copyUp.copy(TieredStack.POLICY.namespace(), ids);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }, threads);
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(() -> {
                await(go);
                sleepQuietly(delay);
                return stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount();
            }, threads);
            go.countDown();
            warm.get(60, TimeUnit.SECONDS);
            counts.add(delete.get(60, TimeUnit.SECONDS));
            alive += survivors(tag);
        }
        assertThat(alive).as("deleted documents a concurrent copy brought back").isZero();
        assertThat(counts).as("each deleteMany's n counts the documents it deleted").containsOnly((long) perRound);
    }

    /** A point read's background promotion racing a delete of the same document, many rounds. */
    @Test
    void deleteRacingAPromotionDeletesTheDocumentAndCountsIt() throws Exception {
        int rounds = 60;
        int wrongN = 0;
        long alive = 0;
        for (int round = 0; round < rounds; round++) {
            String tag = "promoted-" + round;
            BsonDocument d = doc(200_000 + round, tag);
            stack.archiveOrders().insertOne(d);
            CountDownLatch go = new CountDownLatch(1);
            int delay = round % 6;
            CompletableFuture<Void> promote = CompletableFuture.runAsync(() -> {
                await(go);
                sleepQuietly(delay);
                try {
                    copyUp.copy(TieredStack.POLICY.namespace(), List.of(d.get("_id")));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, threads);
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(() -> {
                await(go);
                return stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount();
            }, threads);
            go.countDown();
            promote.get(60, TimeUnit.SECONDS);
            if (delete.get(60, TimeUnit.SECONDS) != 1) {
                wrongN++;
            }
            alive += survivors(tag);
        }
        assertThat(alive).as("documents that survived their delete").isZero();
        assertThat(wrongN).as("deletes whose n was not 1").isZero();
    }

    /**
     * The archive holds the delete's query (a real server's failCommand fail point blocks it) while a
     * copy-up brings the document into the fast tier: the delete must still delete it, and count it.
     */
    @Test
    void deleteDoesNotSkipADocumentCopiedUpWhileItResolvesItsTargets() throws Exception {
        String tag = "held-during-resolve";
        BsonDocument d = doc(400_000, tag);
        stack.archiveOrders().insertOne(d);
        HeldCommand resolve = new HeldCommand(stack.archiveDirect, "{failCommands: ['find'], blockConnection: true, blockTimeMS: 5000}");
        resolve.arm();
        try {
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(
                    () -> stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount(), threads);
            resolve.awaitHeld(); // the delete's query waits on the archive
            assertThat(copyUp.copy(TieredStack.POLICY.namespace(), List.of(d.get("_id"))).copied()).as("copied up meanwhile").isEqualTo(1);
            assertThat(delete).as("the copy-up ran while the delete's query was held").isNotDone();
            assertThat(delete.get(60, TimeUnit.SECONDS)).as("n").isEqualTo(1);
        } finally {
            resolve.off();
        }
        assertThat(survivors(tag)).isZero();
    }

    /** Two applications deleting the same documents at once: each document is deleted once, so the two n add up to the count. */
    @Test
    void concurrentDeletesOfTheSameDocumentsCountEachOnce() throws Exception {
        int rounds = 10;
        int perRound = 40;
        List<String> wrong = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            String tag = "twice-" + round;
            List<BsonDocument> docs = new ArrayList<>();
            for (int i = 0; i < perRound; i++) {
                BsonDocument d = doc(300_000 + round * 1000 + i, tag);
                docs.add(d);
            }
            stack.archiveOrders().insertMany(docs.subList(0, perRound / 2)); // cold
            stack.orders().insertMany(docs.subList(perRound / 2, perRound)); // in the fast tier
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Long> first = CompletableFuture.supplyAsync(() -> {
                await(go);
                return stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount();
            }, threads);
            CompletableFuture<Long> secondDelete = CompletableFuture.supplyAsync(() -> {
                await(go);
                return stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount();
            }, threads);
            go.countDown();
            long n = first.get(60, TimeUnit.SECONDS) + secondDelete.get(60, TimeUnit.SECONDS);
            if (n != perRound) {
                wrong.add(tag + ": n " + n);
            }
            assertThat(survivors(tag)).isZero();
        }
        assertThat(wrong).as("rounds whose two deletes did not add up to the documents deleted").isEmpty();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
