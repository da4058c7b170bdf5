package io.thermocline.tiering.feeder;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Events of Thermocline's own transactions (promotions, warm copies, evictions) are never mirrored:
 * they must not make the feeder wait for a slow archive, nor hold back its checkpoint, which archive
 * reads, evictions and the sync barrier wait for.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OwnEventsIntegrationTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();
    static final int BATCH = 10;
    /** Each archive round trip of the feeder takes this long: a disk-bound archive. */
    static final long ARCHIVE_MILLIS = 100;

    OwnWrites promotions;
    final AtomicInteger archiveRoundTrips = new AtomicInteger();
    int nextOwnId = 100_000;

    @BeforeEach
    void start() {
        promotions = new OwnWrites(tiers.fast, tiers.store, "proxy/test");
    }

    @Test
    void aFloodOfOwnEventsNeverWaitsForTheArchiveAndTheCheckpointPassesIt() throws Exception {
        slowFeeder();
        for (int i = 0; i < 30; i++) {
            copyUp(100); // 3,030 own events: 303 batches of 10 if they took batch slots
        }
        tiers.sync(); // only own events (and the barrier's probe) since the last checkpoint: it must still advance
        assertThat(archiveRoundTrips)
                .as("archive round trips for own events only")
                .hasValue(0);

        tiers.fastOrders().insertOne(order(1, NOW, "user"));
        tiers.sync();
        assertThat(all(tiers.archiveOrders())).containsExactly(order(1, NOW, "user"));
        assertThat(archiveRoundTrips)
                .as("archive round trips for one user write")
                .hasValue(1);
    }

    @Test
    void userWritesAmongOwnEventsShareTheirArchiveRoundTrips() throws Exception {
        tiers.feeder().close(); // a checkpoint exists: the next feeder finds everything below waiting in the stream
        List<BsonDocument> users = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            users.add(order(i, NOW, "user"));
            tiers.fastOrders().insertOne(users.get(i));
            for (int t = 0; t < 5; t++) {
                copyUp(2); // 15 own events after each user write: every batch of 10 events would hold one
            }
        }
        slowFeeder();
        tiers.sync();
        assertThat(all(tiers.archiveOrders())).isEqualTo(users);
        // How many round trips those took depends on how the stream's events arrive (a batch closes when the stream
        // pauses between getMores, which a loaded machine does at any moment): EventQueueTest proves, with every event
        // queued at once, that own events take no batch slot; the round trips are a benchmark's, not a test's.
        assertThat(archiveRoundTrips.get())
                .as("archive round trips for 30 user writes among 450 own events")
                .isPositive();
    }

    private void slowFeeder() {
        FaultInjection slowArchive = point -> {
            if (point == FaultPoint.FEEDER_ARCHIVE_WRITTEN) {
                archiveRoundTrips.incrementAndGet();
                try {
                    Thread.sleep(ARCHIVE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        tiers.feeder(new FeederConfig(BATCH, Duration.ofMillis(20), true), TwoTiers.feederOptions(slowArchive));
    }

    /** A promotion of {@code documents} archive documents: one marked transaction of 1 + documents events. */
    private void copyUp(int documents) {
        List<BsonDocument> copies = new ArrayList<>();
        for (int i = 0; i < documents; i++) {
            copies.add(order(nextOwnId++, NOW, "copied"));
        }
        var fastOrders = tiers.fast.getDatabase("shop").getCollection("orders", BsonDocument.class);
        promotions.inTransaction(session -> Blocking.single(fastOrders.insertMany(session, copies)));
    }
}
