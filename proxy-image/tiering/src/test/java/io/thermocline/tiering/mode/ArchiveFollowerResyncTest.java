package io.thermocline.tiering.mode;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bug: when the archive's oplog rolled past the follower's resume point (code 286) the follower retried
 * forever and the fast tier silently missed the archive's changes. It must resync: make the fast tier equal
 * to the archive (every document it holds, every document its coverage promises) and stream again from a
 * point taken before the copy, losing nothing written meanwhile, and say so (metric, status, log).
 */
@Timeout(120)
class ArchiveFollowerResyncTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();
    static final BsonDocument COLD = order(1000, NOW.minus(Duration.ofHours(5)), "cold, outside the coverage");
    ModeStore modes;

    ArchiveFollowerResyncTest() {
        super(() -> TwoTiers.withArchiveOplogOf(300));
    }

    @BeforeEach
    void start() {
        modes = new ModeStore(tiers.store);
        tiers.archiveOrders().insertOne(COLD);
        Shadowing.enter(tiers);
        tiers.store.updateNamespace(TwoTiers.NS, s -> s.withCoverage(NOW.minus(Duration.ofHours(2))));
    }

    @Test
    void lostHistoryIsResyncedFromTheArchiveWhileWritesGoOnAndNothingIsLostOrStale() throws Exception {
        try (ArchiveFollower first = Shadowing.follower(tiers, "first", Duration.ofSeconds(5), FaultInjection.NONE)) {
            for (int id = 1; id <= 5; id++) {
                tiers.archiveOrders().insertOne(order(id, NOW, "v1"));
            }
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> tiers.fastOrders().countDocuments() == 5);
        }
        // while no follower runs: more archive writes than its oplog holds
        tiers.archiveOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v2"));
        tiers.archiveOrders().deleteOne(Filters.eq("_id", 2));
        tiers.archiveOrders().replaceOne(Filters.eq("_id", 3), order(3, NOW, "replaced"));
        for (int id = 6; id <= 400; id++) {
            tiers.archiveOrders().insertOne(order(id, NOW, "while down"));
        }

        AtomicInteger writes = new AtomicInteger();
        Random random = new Random(16);
        // during the resync: fewer writes than the oplog holds, so the restarted stream finds its position at any speed
        Thread writer = new Thread(
                () -> {
                    while (writes.get() < 150) {
                        writeAtRandom(random, writes);
                        try {
                            Thread.sleep(3); // spread over the copy
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "archive-writer");

        // writes between the resync's stream position and its copy: the restarted stream must bring them
        Shadowing.Pause positionTaken = new Shadowing.Pause(FaultPoint.FOLLOWER_RESYNC_POSITION_TAKEN, () -> {
            tiers.archiveOrders().updateOne(Filters.eq("_id", 4), Updates.set("state", "after the position"));
            tiers.archiveOrders().insertOne(order(500, NOW, "after the position"));
            writer.start();
        });
        ArchiveFollower.Options options = Shadowing.options(Duration.ofSeconds(5), positionTaken);
        try (ArchiveFollower second = Shadowing.follower(tiers, "second", options)) {
            positionTaken.awaitReached();
            positionTaken.resume();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> modes.follower().resync() != null
                            && !modes.follower().resync().running());
            writer.join(30_000);
            while (writes.get() < 250) { // and after it, streamed as usual
                writeAtRandom(random, writes);
            }

            await().atMost(Duration.ofSeconds(60))
                    .until(() -> all(tiers.fastOrders()).equals(covered()));
            assertThat(all(tiers.fastOrders()))
                    .as("the fast tier = the archive's covered documents")
                    .isEqualTo(covered());
            assertThat(byId(tiers.fastOrders(), COLD.get("_id")))
                    .as("a resync copies only what the coverage promises")
                    .isNull();

            FollowerResync resync = modes.follower().resync();
            assertThat(resync.count()).isEqualTo(1);
            assertThat(resync.reason()).contains("286");
            assertThat(resync.copied())
                    .as("documents 1 and 3 and the inserts, written while no follower ran")
                    .isGreaterThanOrEqualTo(3);
            assertThat(resync.deleted())
                    .as("document 2, deleted while no follower ran")
                    .isGreaterThanOrEqualTo(1);
            assertThat(state(1)).isEqualTo("v2");
            assertThat(state(3)).isEqualTo("replaced");
            assertThat(state(4))
                    .as("written after the stream position, before the copy")
                    .isEqualTo("after the position");
            assertThat(counter(options, "thermocline_follower_resyncs")).isEqualTo(1);
            assertThat(modes.follower().changing(TwoTiers.NS))
                    .as("no longer announced as changing at any time")
                    .isLessThan(new org.bson.BsonTimestamp(-1L));
        }
    }

    /** An update, an upsert or a delete of a document 100-419 (documents 1-5 keep what the test asserts on). */
    private void writeAtRandom(Random random, AtomicInteger writes) {
        int id = 100 + random.nextInt(320);
        switch (random.nextInt(3)) {
            case 0 -> tiers.archiveOrders().updateOne(Filters.eq("_id", id), Updates.set("state", "w" + writes.get()));
            case 1 ->
                tiers.archiveOrders()
                        .replaceOne(
                                Filters.eq("_id", id),
                                order(id, NOW, "r" + writes.get()),
                                new ReplaceOptions().upsert(true));
            default -> tiers.archiveOrders().deleteOne(Filters.eq("_id", id));
        }
        writes.incrementAndGet();
    }

    private String state(int id) {
        BsonDocument d = byId(tiers.fastOrders(), new BsonInt32(id));
        return d == null ? "" : d.getString("state").getValue();
    }

    private List<BsonDocument> covered() {
        return all(tiers.archiveOrders()).stream()
                .filter(d -> !d.get("_id").equals(COLD.get("_id")))
                .toList();
    }

    private static double counter(ArchiveFollower.Options options, String name) {
        return options.registry().scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals(name))
                .map(m -> ((CounterSnapshot) m).getDataPoints().get(0).getValue())
                .findFirst()
                .orElse(0.0);
    }
}
