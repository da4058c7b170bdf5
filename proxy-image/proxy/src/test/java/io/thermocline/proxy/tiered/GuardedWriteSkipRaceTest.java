package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A guarded write of a document the fast tier lacks skips the sync barrier when no fence names it:
 * the archive then holds its latest version. The race: the document is evicted right after the write
 * read its (absent) fence, and the archive still holds an older version (an update and its undo raced
 * the eviction; the feeder mirrors the undo from the eviction fence only later). The write reads that
 * stale version without waiting; its transaction must see the eviction fence and start over, and the
 * next attempt waits for the feeder: the update applies to the acknowledged version.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GuardedWriteSkipRaceTest {

    static final Instant NOW = Instant.now();
    TieredStack stack;
    UndoRacingEviction race;

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        race = new UndoRacingEviction(stack, "guarded-skip-race-test");
        stack.startFeeder();
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    @Test
    void aWriteThatSkippedTheBarrierAndReadAStaleArchiveCopyStartsOverAndUpdatesTheLatestVersion() throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(5, NOW.minus(Duration.ofHours(3)), "cold")
                .append("tag", new BsonString("c"));
        stack.fastOrders().insertOne(cold);
        assertThat(race.barrier.sync(Duration.ofSeconds(10))).isPresent();
        AtomicBoolean raced = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<CompletableFuture<Boolean>> feederStarted =
                new java.util.concurrent.atomic.AtomicReference<>();
        stack.writeRaces.set(point -> {
            if (point != WriteRaces.Point.GUARDED_WRITE_FENCES_READ || !raced.compareAndSet(false, true)) {
                return;
            }
            try {
                race.evictWithUndoNotMirrored(5);
                // the first attempt reads the archive's stale copy; the feeder starts once the next attempt waits for
                // it
                feederStarted.set(race.startFeederOnceTheProxyWaits());
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        // a filter beyond _id: not an update that may first run unchecked (HeldPointUpdate), so the checked path meets
        // the race
        assertThat(stack.orders()
                        .updateOne(Filters.and(Filters.eq("_id", 5), Filters.exists("tag")), Updates.set("paid", true))
                        .getModifiedCount())
                .isOne();
        assertThat(raced).as("the eviction ran inside the write").isTrue();
        assertThat(feederStarted.get().get(90, TimeUnit.SECONDS))
                .as("the write started over and waited for the feeder at its sync barrier")
                .isTrue();
        BsonDocument read = stack.orders().find(Filters.eq("_id", 5)).first();
        assertThat(read.getString("tag").getValue())
                .as("the update applied to the acknowledged version: %s", read)
                .isEqualTo("c");
        assertThat(read.getBoolean("paid").getValue()).isTrue();
        assertThat(race.barrier.sync(Duration.ofSeconds(10))).isPresent();
        BsonDocument archived = stack.archiveOrders().find(Filters.eq("_id", 5)).first();
        assertThat(archived.getString("tag").getValue())
                .as("mirrored: %s", archived)
                .isEqualTo("c");
    }
}
