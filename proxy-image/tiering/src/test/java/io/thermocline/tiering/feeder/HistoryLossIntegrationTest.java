package io.thermocline.tiering.feeder;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.FeederHealth;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bug: when the fast tier's oplog rolled past the feeder's resume point (code 286), the feeder
 * retried forever. It must resync the archive from the fast tier (upserts, and deletes from user
 * fences), then stream from a point taken before the resync's scan, losing nothing.
 */
@Timeout(120)
class HistoryLossIntegrationTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();

    HistoryLossIntegrationTest() {
        super(() -> TwoTiers.withFastOplogOf(100));
    }

    @Test
    void lostHistoryIsResyncedFromTheFastTierAndStreamingGoesOn() throws Exception {
        tiers.archiveOrders().insertOne(order(1000, NOW.minus(Duration.ofHours(5)), "cold, archive only"));
        Feeder first = tiers.feeder();
        for (int id = 1; id <= 5; id++) {
            tiers.fastOrders().insertOne(order(id, NOW, "v1"));
        }
        tiers.sync();
        first.close();

        // while the feeder is down: more writes than the oplog holds
        tiers.fastOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v2"));
        tiers.userDeletes.deleteOne(TwoTiers.NS, new BsonInt32(2));
        tiers.fastOrders().replaceOne(Filters.eq("_id", 3), order(3, NOW, "replaced"));
        for (int id = 6; id <= 200; id++) {
            tiers.fastOrders().insertOne(order(id, NOW, "while down"));
        }

        PrometheusRegistry registry = new PrometheusRegistry();
        tiers.feeder(
                new FeederConfig(100, Duration.ofMillis(20), true),
                TwoTiers.feederOptions(FaultInjection.NONE).withRegistry(registry));
        assertThat(tiers.barrier.sync(Duration.ofSeconds(20)))
                .as("the feeder recovered from lost history")
                .isPresent();

        List<BsonDocument> expected = new ArrayList<>(all(tiers.fastOrders()));
        expected.add(order(1000, NOW.minus(Duration.ofHours(5)), "cold, archive only"));
        assertThat(all(tiers.archiveOrders()))
                .as("archive = fast tier + the cold document, 2 deleted")
                .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(2))).isNull();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1))
                        .getString("state")
                        .getValue())
                .isEqualTo("v2");

        FeederHealth.HistoryLoss loss = tiers.store.feederHealth().historyLost();
        assertThat(loss).isNotNull();
        assertThat(loss.resyncing()).isFalse();
        assertThat(loss.deleted()).isEqualTo(1);
        assertThat(registry.scrape().stream()
                        .filter(m -> m.getMetadata().getPrometheusName().equals("thermocline_feeder_history_lost"))
                        .map(m -> ((CounterSnapshot) m).getDataPoints().get(0).getValue())
                        .findFirst()
                        .orElseThrow())
                // each loss counts: on a loaded machine a resync's archive write may time out (the lease is 1 s here),
                // and
                // the feeder, restarting from its checkpoint, finds the history lost again and resyncs again
                .isGreaterThanOrEqualTo(1.0);

        // streaming goes on from the fresh stream
        tiers.fastOrders().insertOne(order(500, NOW, "after the resync"));
        tiers.userDeletes.deleteOne(TwoTiers.NS, new BsonInt32(4));
        tiers.sync();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(500))).isNotNull();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(4))).isNull();
    }

    /**
     * Issue 37: a resync that fails before its scan (the archive unreachable) must not leave the feeder streaming
     * from the resync's starting point. Until 2026-12-07 the stream opened at that point stayed open, the next
     * round mirrored from it and published mirrored-through past every write made while the feeder was down,
     * none of which the archive held.
     */
    @Test
    void aResyncThatFailsBeforeItsScanPublishesNothingUntilAResyncFinishes() throws Exception {
        tiers.archiveOrders().insertOne(order(1000, NOW.minus(Duration.ofHours(5)), "cold, archive only"));
        Feeder first = tiers.feeder();
        tiers.fastOrders().insertOne(order(1, NOW, "v1"));
        tiers.sync();
        first.close();
        tiers.fastOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v2"));
        for (int id = 6; id <= 200; id++) {
            tiers.fastOrders().insertOne(order(id, NOW, "while down"));
        }

        AtomicInteger failed = new AtomicInteger();
        FaultInjection archiveGoneOnce = point -> {
            if (point == FaultPoint.FEEDER_RESYNC_STARTED && failed.getAndIncrement() == 0) {
                throw new MongoSocketReadException(
                        "injected: the archive went away as the resync began", new ServerAddress("archive", 27017));
            }
        };
        tiers.startFeeder(new FeederConfig(100, Duration.ofMillis(20), true), TwoTiers.feederOptions(archiveGoneOnce));
        assertThat(tiers.barrier.sync(Duration.ofSeconds(30)))
                .as("the feeder recovered from lost history")
                .isPresent();

        List<BsonDocument> expected = new ArrayList<>(all(tiers.fastOrders()));
        expected.add(order(1000, NOW.minus(Duration.ofHours(5)), "cold, archive only"));
        assertThat(all(tiers.archiveOrders()))
                .as(
                        "mirrored through a probe written after them: the archive holds every write made while the feeder was down")
                .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(failed.get()).as("the first resync failed, a later one ran").isGreaterThanOrEqualTo(2);
    }
}
