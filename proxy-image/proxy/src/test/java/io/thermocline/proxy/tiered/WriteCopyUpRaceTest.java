package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Updates;
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
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * User writes of cold documents racing a copy-up (warm copy, read-through promotion) of the same
 * {@code _id}, for real: the copies run in another thread through the workers' own {@link CopyUp}
 * while the write goes through the proxy. The guarded write's own copy then meets the other copy's
 * insert (a duplicate key on a server without snapshot isolation, a WriteConflict on MongoDB): that is
 * a transient conflict, never the client's error. One replica set accepts the update, and refuses a
 * batch insert over the archived {@code _id} only at that statement's index (E11000).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class WriteCopyUpRaceTest {

    static TieredStack stack;
    static CopyUp copyUp;
    static final Instant NOW = Instant.now();
    static final ExecutorService threads = Executors.newCachedThreadPool();
    static final int ROUNDS = 60;

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        MetadataStore store = new MetadataStore(stack.fastWorkers);
        MirrorBarrier barrier = new MirrorBarrier(stack.fastWorkers, store, "write-race-test");
        copyUp = new CopyUp(stack.fastWorkers, stack.archiveWorkers, store, new OwnWrites(stack.fastWorkers, store, "warmer/write-race-test"),
                barrier, Duration.ofSeconds(10), Duration.ofMinutes(10), FaultInjection.NONE);
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        stack.close();
    }

    private static BsonDocument cold(int id) {
        return SessionConsistencyTest.order(id, NOW.minus(Duration.ofMinutes(10)), "cold");
    }

    /** Copies {@code id} up after {@code delayMillis}, in another thread, once {@code go} opens. */
    private static CompletableFuture<Void> copyUpLater(int id, CountDownLatch go, int delayMillis) {
        return CompletableFuture.runAsync(() -> {
            await(go);
            sleepQuietly(delayMillis);
            try {
                copyUp.copy(TieredStack.POLICY.namespace(), List.of(new BsonInt32(id)));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, threads);
    }

    @Test
    void anUpdateOfAColdDocumentRacingItsCopyUpIsApplied() throws Exception {
        List<String> failed = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            int id = 500_000 + round;
            stack.archiveOrders().insertOne(cold(id));
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Void> copy = copyUpLater(id, go, round % 8);
            int value = round;
            CompletableFuture<Long> update = CompletableFuture.supplyAsync(() -> {
                await(go);
                return stack.orders().updateOne(Filters.eq("_id", id), Updates.set("v", value)).getMatchedCount();
            }, threads);
            go.countDown();
            copy.get(60, TimeUnit.SECONDS);
            try {
                long matched = update.get(60, TimeUnit.SECONDS);
                BsonDocument now = stack.orders().find(Filters.eq("_id", id)).first();
                if (matched != 1 || now == null || !now.containsKey("v") || now.getNumber("v").intValue() != value) {
                    failed.add("round " + round + ": matched " + matched + ", now " + now);
                }
            } catch (java.util.concurrent.ExecutionException e) {
                failed.add("round " + round + ": " + e.getCause());
            }
        }
        assertThat(failed).as("updates of a cold document racing its copy-up").isEmpty();
    }

    @Test
    void aBatchInsertOverAnArchivedIdRacingItsCopyUpIsRefusedAtThatIndexOnly() throws Exception {
        List<String> failed = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            boolean ordered = round % 2 == 0;
            int archived = 600_000 + round * 10;
            stack.archiveOrders().insertOne(cold(archived));
            List<BsonDocument> batch = List.of(cold(archived + 1).append("tag", new BsonString("new")),
                    cold(archived).append("tag", new BsonString("duplicate")), cold(archived + 2).append("tag", new BsonString("new")));
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Void> copy = copyUpLater(archived, go, round % 8);
            CompletableFuture<String> insert = CompletableFuture.supplyAsync(() -> {
                await(go);
                try {
                    stack.orders().insertMany(batch, new InsertManyOptions().ordered(ordered));
                    return "no error for the archived _id";
                } catch (MongoBulkWriteException e) {
                    int expected = ordered ? 1 : 2;
                    boolean right = e.getWriteErrors().size() == 1 && e.getWriteErrors().get(0).getIndex() == 1
                            && e.getWriteErrors().get(0).getCode() == 11000 && e.getWriteResult().getInsertedCount() == expected;
                    return right ? null : e.getWriteErrors() + " inserted " + e.getWriteResult().getInsertedCount();
                }
            }, threads);
            go.countDown();
            copy.get(60, TimeUnit.SECONDS);
            try {
                String wrong = insert.get(60, TimeUnit.SECONDS);
                long present = stack.fastOrders().countDocuments(Filters.in("_id", archived + 1, archived + 2));
                BsonDocument original = stack.orders().find(Filters.eq("_id", archived)).first();
                if (wrong != null) {
                    failed.add("round " + round + " (ordered=" + ordered + "): " + wrong);
                } else if (present != (ordered ? 1 : 2) || original == null || original.containsKey("tag")) {
                    failed.add("round " + round + " (ordered=" + ordered + "): " + present + " new documents, archived one now " + original);
                }
            } catch (java.util.concurrent.ExecutionException e) {
                failed.add("round " + round + " (ordered=" + ordered + "): " + e.getCause());
            }
        }
        assertThat(failed).as("batch inserts over an archived _id racing its copy-up").isEmpty();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleepQuietly(int millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
