package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A delete whose filter names fields other than {@code _id} must match the version the fast tier
 * acknowledged last, also for a document evicted while the archive still holds an older version: an
 * update (c to c') mirrored, its undo (back to c) not yet, and the evictor removed c (its fence carries
 * c; the feeder mirrors it from there later). A primary holding c deletes it for {@code {tag: "c"}}; so
 * must the proxy, and the archive must end without the document.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeleteAfterEvictionRaceTest {

    static final Instant NOW = Instant.now();
    TieredStack stack;
    UndoRacingEviction race;

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        race = new UndoRacingEviction(stack, "delete-eviction-race-test");
        stack.startFeeder();
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    @Test
    void aDeleteOneByAnotherFieldMatchesTheAcknowledgedVersionOfAnEvictedDocument() throws Exception {
        evictWithUndoNotMirrored(5);
        CompletableFuture<Boolean> feederStarted = race.startFeederOnceTheProxyWaits();
        assertThat(stack.orders().deleteOne(Filters.eq("tag", "c")).getDeletedCount())
                .as("the acknowledged version has tag c")
                .isOne();
        assertThat(feederStarted.get(90, TimeUnit.SECONDS))
                .as("the delete waited for the feeder at its sync barrier")
                .isTrue();
        assertGoneFromBothTiers(5);
    }

    @Test
    void aDeleteManyByAnotherFieldMatchesTheAcknowledgedVersionOfAnEvictedDocument() throws Exception {
        evictWithUndoNotMirrored(6);
        CompletableFuture<Boolean> feederStarted = race.startFeederOnceTheProxyWaits();
        assertThat(stack.orders().deleteMany(Filters.eq("tag", "c")).getDeletedCount())
                .isOne();
        assertThat(feederStarted.get(90, TimeUnit.SECONDS))
                .as("the delete waited for the feeder at its sync barrier")
                .isTrue();
        assertGoneFromBothTiers(6);
    }

    /** Leaves document {@code id} evicted at version c, the archive at c', and the feeder stopped. */
    private void evictWithUndoNotMirrored(int id) throws Exception {
        stack.fastOrders()
                .insertOne(SessionConsistencyTest.order(id, NOW.minus(Duration.ofHours(3)), "cold")
                        .append("tag", new BsonString("c")));
        race.evictWithUndoNotMirrored(id);
    }

    private void assertGoneFromBothTiers(int id) throws Exception {
        assertThat(stack.orders().find(Filters.eq("_id", id)).first())
                .as("read through the proxy")
                .isNull();
        assertThat(race.barrier.sync(Duration.ofSeconds(10))).isPresent();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", id)).first())
                .as("the archive's copy")
                .isNull();
        assertThat(stack.fastOrders().find(Filters.eq("_id", id)).first())
                .as("the fast tier's")
                .isNull();
    }
}
