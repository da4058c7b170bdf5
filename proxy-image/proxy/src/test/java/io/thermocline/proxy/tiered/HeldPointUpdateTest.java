package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An update by {@code _id} runs first without the guarded write's checks, trusting its own reply to
 * show the fast tier held the document. When the evictor has removed it (the archive still holds an
 * older version, its latest one only in the eviction fence), before the update or after its
 * transaction began, the reply proves nothing (no match, an upsert of a bare document) or the update
 * conflicts; the transaction is aborted, and the checked path copies the acknowledged version back
 * and updates it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HeldPointUpdateTest {

    static final Instant NOW = Instant.now();
    TieredStack stack;
    UndoRacingEviction race;
    final List<WriteRaces.Point> reached = new CopyOnWriteArrayList<>();
    /** Completes true once the feeder was started because the update waited for it at its sync barrier. */
    volatile CompletableFuture<Boolean> feederStarted;

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        race = new UndoRacingEviction(stack, "held-update-test");
        stack.startFeeder();
        BsonDocument held = SessionConsistencyTest.order(5, NOW.minus(Duration.ofHours(3)), "held")
                .append("tag", new BsonString("c"));
        stack.fastOrders().insertOne(held);
        assertThat(race.barrier.sync(Duration.ofSeconds(10))).isPresent();
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    @Test
    void anUpdateOfAHeldDocumentCommitsOnItsOwnReplyWithoutTheCheckedPath() throws Exception {
        stack.writeRaces.set(reached::add);
        UpdateResult result = stack.orders().updateOne(Filters.eq("_id", 5), Updates.set("paid", true));
        assertThat(result.getMatchedCount()).isOne();
        assertThat(result.getModifiedCount()).isOne();
        assertThat(reached).containsExactly(WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION);
        assertThat(stack.fastOrders()
                        .find(Filters.eq("_id", 5))
                        .first()
                        .getBoolean("paid")
                        .getValue())
                .isTrue();
        assertThat(race.barrier.sync(Duration.ofSeconds(10))).isPresent();
        assertThat(stack.archiveOrders()
                        .find(Filters.eq("_id", 5))
                        .first()
                        .getBoolean("paid")
                        .getValue())
                .as("mirrored")
                .isTrue();
    }

    @Test
    void anUpdateOfADocumentTheFastTierNoLongerHoldsIsCopiedBackAtItsAcknowledgedVersionAndUpdated() throws Exception {
        race.evictWithUndoNotMirrored(5);
        feederStarted = race.startFeederOnceTheProxyWaits();
        stack.writeRaces.set(reached::add);
        UpdateResult result = stack.orders().updateOne(Filters.eq("_id", 5), Updates.set("paid", true));
        assertThat(reached)
                .as("the unchecked attempt matched nothing, then the checked path ran")
                .containsSequence(
                        WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION, WriteRaces.Point.GUARDED_WRITE_FENCES_READ);
        assertThat(result.getMatchedCount()).isOne();
        assertThat(result.getModifiedCount()).isOne();
        assertUpdatedAtTheAcknowledgedVersion();
    }

    @Test
    void anUpsertOfADocumentTheFastTierNoLongerHoldsDoesNotCreateABareOne() throws Exception {
        race.evictWithUndoNotMirrored(5);
        feederStarted = race.startFeederOnceTheProxyWaits();
        stack.writeRaces.set(reached::add);
        UpdateResult result = stack.orders()
                .updateOne(Filters.eq("_id", 5), Updates.set("paid", true), new UpdateOptions().upsert(true));
        assertThat(reached)
                .containsSequence(
                        WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION, WriteRaces.Point.GUARDED_WRITE_FENCES_READ);
        assertThat(result.getUpsertedId())
                .as("the document existed: nothing is upserted")
                .isNull();
        assertThat(result.getMatchedCount()).isOne();
        assertUpdatedAtTheAcknowledgedVersion();
    }

    @Test
    void aDocumentEvictedAfterTheTransactionBeganAndBeforeTheUpdateRanIsCopiedBackAndUpdated() throws Exception {
        evictInsideTheFirstAttempt();
        UpdateResult result = stack.orders().updateOne(Filters.eq("_id", 5), Updates.set("paid", true));
        assertThat(reached)
                .as("the eviction ran inside the unchecked attempt, then the checked path ran")
                .containsSequence(
                        WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION, WriteRaces.Point.GUARDED_WRITE_FENCES_READ);
        assertThat(result.getMatchedCount()).isOne();
        assertThat(result.getModifiedCount()).isOne();
        assertUpdatedAtTheAcknowledgedVersion();
    }

    /** At the unchecked attempt's race point, once: the document is evicted at c while the archive holds c'. */
    private void evictInsideTheFirstAttempt() {
        AtomicBoolean raced = new AtomicBoolean();
        stack.writeRaces.set(point -> {
            reached.add(point);
            if (point != WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION || !raced.compareAndSet(false, true)) {
                return;
            }
            try {
                race.evictWithUndoNotMirrored(5);
                feederStarted = race.startFeederOnceTheProxyWaits();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private void assertUpdatedAtTheAcknowledgedVersion() throws Exception {
        assertThat(feederStarted.get(90, TimeUnit.SECONDS))
                .as("the update waited for the feeder at its sync barrier (the race)")
                .isTrue();
        BsonDocument read = stack.orders().find(Filters.eq("_id", 5)).first();
        assertThat(read.getString("tag").getValue())
                .as("the update applied to the acknowledged version: %s", read)
                .isEqualTo("c");
        assertThat(read.getBoolean("paid").getValue()).isTrue();
        assertThat(read.containsKey("createdAt"))
                .as("not a bare upserted document: %s", read)
                .isTrue();
        assertThat(race.barrier.sync(Duration.ofSeconds(10))).isPresent();
        BsonDocument archived = stack.archiveOrders().find(Filters.eq("_id", 5)).first();
        assertThat(archived.getString("tag").getValue())
                .as("mirrored: %s", archived)
                .isEqualTo("c");
        assertThat(archived.getBoolean("paid").getValue()).isTrue();
    }
}
