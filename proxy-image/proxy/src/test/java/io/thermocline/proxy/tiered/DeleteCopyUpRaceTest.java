package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.worker.FaultPoint;
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
 * User deletes racing copy-ups (warm copies, read-through promotions) for real: the copies run through
 * the workers' own {@link CopyUp} while the delete goes through the proxy, made to meet at each place they
 * can interleave ({@link CopyUpMeeting}: no sleep, and each round checks they met) or held at the archive.
 * A deleted document must stay deleted, and the delete's {@code n} must count what it deleted.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DeleteCopyUpRaceTest {

    static TieredStack stack;
    static CopyUpMeeting meeting;
    static CopyUp copyUp;
    static MirrorBarrier barrier;
    static final Instant NOW = Instant.now();
    static final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        meeting = new CopyUpMeeting(stack);
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        barrier = new MirrorBarrier(stack.fastWorkers, store, "race-test");
        copyUp = new CopyUp(
                stack.fastWorkers,
                stack.archiveWorkers,
                store,
                new OwnWrites(stack.fastWorkers, store, "warmer/race-test"),
                barrier,
                Duration.ofSeconds(10),
                Duration.ofMinutes(10),
                meeting.faults());
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        stack.close();
    }

    private static BsonDocument doc(int id, String tag) {
        return SessionConsistencyTest.order(id, NOW.minus(Duration.ofMinutes(10)), "cold")
                .append("tag", new BsonString(tag));
    }

    private static long survivors(String tag) throws InterruptedException {
        assertThat(barrier.sync(Duration.ofSeconds(10))).isPresent();
        return stack.orders().countDocuments(Filters.eq("tag", tag))
                + stack.fastOrders().countDocuments(Filters.eq("tag", tag));
    }

    /** Both ways round, at every point where a copy-up and a delete can interleave. */
    static final List<CopyUpMeeting.Point> MEETINGS = List.of(
            CopyUpMeeting.Point.copyUpAt(WriteRaces.Point.DELETE_BETWEEN_TIER_READS),
            CopyUpMeeting.Point.writeAt(FaultPoint.COPY_UP_FENCES_READ),
            CopyUpMeeting.Point.writeAt(FaultPoint.WARMER_BEFORE_COPY));

    private static CopyUp.Result copy(List<BsonDocument> docs) throws InterruptedException {
        List<BsonValue> ids = new ArrayList<>();
        docs.forEach(d -> ids.add(d.get("_id")));
        return copyUp.copy(TieredStack.POLICY.namespace(), ids);
    }

    /**
     * Warm-up copying batches of archived documents while the application deletes them all: the batches
     * before the meeting's are in the fast tier when the delete starts, the meeting's batch meets it, and
     * the batches after it find the documents deleted.
     */
    @Test
    void deleteManyDuringWarmCopiesLeavesNothingAlive() throws Exception {
        int perRound = 120;
        int batch = 10;
        long alive = 0;
        List<String> counts = new ArrayList<>();
        int round = 0;
        for (CopyUpMeeting.Point at : MEETINGS) {
            for (int metBatch : List.of(0, 5, 11)) {
                String tag = "warm-" + round;
                List<BsonDocument> docs = new ArrayList<>();
                for (int i = 0; i < perRound; i++) {
                    docs.add(doc(100_000 + round * 1000 + i, tag));
                }
                round++;
                stack.archiveOrders().insertMany(docs);
                for (int b = 0; b < metBatch; b++) {
                    copy(docs.subList(b * batch, (b + 1) * batch));
                }
                List<BsonDocument> met = docs.subList(metBatch * batch, (metBatch + 1) * batch);
                long n = meeting.run(
                                at,
                                () -> copy(met),
                                () -> stack.orders()
                                        .deleteMany(Filters.eq("tag", tag))
                                        .getDeletedCount())
                        .written();
                for (int b = metBatch + 1; b < perRound / batch; b++) {
                    copy(docs.subList(b * batch, (b + 1) * batch));
                }
                counts.add(at + ", batch " + metBatch + ": n " + n);
                alive += survivors(tag);
            }
        }
        assertThat(alive).as("deleted documents a concurrent copy brought back").isZero();
        assertThat(counts)
                .as("each deleteMany's n counts the documents it deleted")
                .allMatch(c -> c.endsWith(": n " + perRound));
    }

    /** A point read's promotion racing a delete (deleteOne, deleteMany) of the same document, at each place they can meet. */
    @Test
    void deleteRacingAPromotionDeletesTheDocumentAndCountsIt() throws Exception {
        List<String> wrongN = new ArrayList<>();
        long alive = 0;
        int round = 0;
        for (CopyUpMeeting.Point at : MEETINGS) {
            for (boolean many : List.of(false, true)) {
                String tag = "promoted-" + round;
                BsonDocument d = doc(200_000 + round, tag);
                round++;
                stack.archiveOrders().insertOne(d);
                long n = meeting.run(
                                at,
                                () -> copy(List.of(d)),
                                () -> many
                                        ? stack.orders()
                                                .deleteMany(Filters.eq("tag", tag))
                                                .getDeletedCount()
                                        : stack.orders()
                                                .deleteOne(Filters.eq("tag", tag))
                                                .getDeletedCount())
                        .written();
                if (n != 1) {
                    wrongN.add(at + (many ? ", deleteMany" : ", deleteOne") + ": n " + n);
                }
                alive += survivors(tag);
            }
        }
        assertThat(alive).as("documents that survived their delete").isZero();
        assertThat(wrongN).as("deletes whose n was not 1").isEmpty();
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
        HeldCommand resolve = new HeldCommand(
                stack.archiveDirect, "{failCommands: ['find'], blockConnection: true, blockTimeMS: 5000}");
        resolve.arm();
        try {
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(
                    () -> stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount(), threads);
            resolve.awaitHeld(); // the delete's query waits on the archive
            assertThat(copyUp.copy(TieredStack.POLICY.namespace(), List.of(d.get("_id")))
                            .copied())
                    .as("copied up meanwhile")
                    .isEqualTo(1);
            assertThat(delete)
                    .as("the copy-up ran while the delete's query was held")
                    .isNotDone();
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
            CompletableFuture<Long> first = CompletableFuture.supplyAsync(
                    () -> {
                        await(go);
                        return stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount();
                    },
                    threads);
            CompletableFuture<Long> secondDelete = CompletableFuture.supplyAsync(
                    () -> {
                        await(go);
                        return stack.orders().deleteMany(Filters.eq("tag", tag)).getDeletedCount();
                    },
                    threads);
            go.countDown();
            long n = first.get(60, TimeUnit.SECONDS) + secondDelete.get(60, TimeUnit.SECONDS);
            if (n != perRound) {
                wrong.add(tag + ": n " + n);
            }
            assertThat(survivors(tag)).isZero();
        }
        assertThat(wrong)
                .as("rounds whose two deletes did not add up to the documents deleted")
                .isEmpty();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
