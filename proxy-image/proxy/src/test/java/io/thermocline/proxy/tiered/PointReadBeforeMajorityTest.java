package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.DeleteResult;
import io.thermocline.config.ReadConsistency;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A point read on a fast tier of three members whose majority lags its primary (the history checker's failover
 * scenario saw this as a STALE_READ): the fast-tier lookup reads the primary's present and finds the document
 * gone, removed by a user delete that is applied there but not yet majority-committed. The delete's fence,
 * written in the same transaction, must then be seen by the fence read that follows; read at the majority
 * point it was not, the read skipped the barrier and answered the archive's version from before an update
 * acknowledged earlier, which the stopped feeder had not mirrored.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PointReadBeforeMajorityTest {

    static final Instant OLD = Instant.now().minus(Duration.ofHours(2)); // outside the 1 h window: never promoted

    @Test
    void aPointReadThatSawAnUncommittedDeleteNeverAnswersWithAVersionBeforeAnAcknowledgedUpdate() throws Exception {
        try (TieredStack stack = new TieredStack(
                        Duration.ofSeconds(20),
                        Duration.ofMillis(5),
                        ReadConsistency.LINEARIZABLE,
                        TierPair.embeddedFast(3));
                MongoClient reader = MongoClients.create("mongodb://127.0.0.1:" + stack.proxy.port())) {
            EmbeddedReplicaSet fast = stack.tiers.embeddedFast().orElseThrow();
            MirrorBarrier barrier =
                    new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "before-majority-test");
            stack.startFeeder();
            stack.archiveOrders().insertOne(SessionConsistencyTest.order(1, OLD, "archived"));
            stack.orders().updateOne(Filters.eq("_id", 1), Updates.set("state", "copied up")); // now in the fast tier
            assertThat(barrier.sync(Duration.ofSeconds(20))).as("mirrored").isPresent();
            stack.stopFeeder(); // from here on nothing reaches the archive
            assertThat(stack.orders()
                            .updateOne(Filters.eq("_id", 1), Updates.set("state", "paid"))
                            .getModifiedCount())
                    .as("acknowledged by a majority, never mirrored")
                    .isEqualTo(1);

            fast.secondaries().forEach(fast::pauseReplication);
            CompletableFuture<DeleteResult> delete =
                    CompletableFuture.supplyAsync(() -> stack.orders().deleteOne(Filters.eq("_id", 1)));
            CompletableFuture<BsonDocument> read;
            try {
                awaitGoneOnThePrimary(stack);
                long majorityWaits = fast.majorityReadsThatWaited();
                read = CompletableFuture.supplyAsync(() -> reader.getDatabase(TieredStack.POLICY.database())
                        .getCollection(TieredStack.POLICY.collection(), BsonDocument.class)
                        .find(Filters.eq("_id", 1))
                        .first());
                // the read answers, or waits for the delete to be majority-committed: either is a positive signal
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!read.isDone() && fast.majorityReadsThatWaited() == majorityWaits) {
                    assertThat(System.nanoTime())
                            .as("the read neither answered nor waited for the majority")
                            .isLessThan(deadline);
                    Thread.sleep(5);
                }
            } finally {
                fast.secondaries().forEach(fast::resumeReplication);
            }
            BsonDocument answer = read.get(60, TimeUnit.SECONDS);
            assertThat(answer == null ? "nothing" : answer.getString("state").getValue())
                    .as(
                            "concurrent with the delete: nothing, or the acknowledged update; never the archive's older version")
                    .isIn("nothing", "paid");
            assertThat(delete.get(60, TimeUnit.SECONDS).getDeletedCount()).isEqualTo(1);
            assertThat(reader.getDatabase(TieredStack.POLICY.database())
                            .getCollection(TieredStack.POLICY.collection(), BsonDocument.class)
                            .find(Filters.eq("_id", 1))
                            .first())
                    .as("after the delete")
                    .isNull();
        }
    }

    /** A read of the fast tier's primary (local): the delete is applied there. */
    private static void awaitGoneOnThePrimary(TieredStack stack) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (stack.fastOrders().find(Filters.eq("_id", 1)).first() != null) {
            assertThat(System.nanoTime())
                    .as("the delete reached the fast tier's primary")
                    .isLessThan(deadline);
            Thread.sleep(5);
        }
    }
}
