package io.thermocline.tiering.mode;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two feeder processes during a rolling update each run an archive follower: only the lease holder may
 * write, and a follower deposed while a batch was in flight must not land it over its successor's newer
 * events (an older insert over a newer update).
 */
@Timeout(60)
class ArchiveFollowerLeaseTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();
    ModeStore modes;

    @BeforeEach
    void start() {
        modes = new ModeStore(tiers.store);
        Shadowing.enter(tiers);
    }

    @Test
    void aDeposedFollowersInFlightBatchIsRefusedAndTheFastTierEndsEqualToTheArchive() throws Exception {
        Shadowing.Pause beforeApply = new Shadowing.Pause(FaultPoint.FOLLOWER_BEFORE_APPLY);
        try (ArchiveFollower first = Shadowing.follower(tiers, "first", Duration.ofMillis(500), beforeApply)) {
            awaitHolder("first");
            tiers.archiveOrders().insertOne(order(1, NOW, "v1"));
            beforeApply.awaitReached(); // first read the insert and stopped before its transaction

            // the successor's lease is long: a 500 ms one can lapse on a loaded machine between two renewals, and the
            // first would then rightly take it back, which is not the case this test is about
            try (ArchiveFollower second =
                    Shadowing.follower(tiers, "second", Duration.ofSeconds(20), FaultInjection.NONE)) {
                awaitHolder("second"); // first's lease ran out while it was paused
                tiers.archiveOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v2"));
                await().atMost(Duration.ofSeconds(20)).until(() -> state(1).equals("v2"));

                beforeApply.resume();
                await().atMost(Duration.ofSeconds(20)).until(() -> first.deposed() > 0 || first.applied() > 0);

                assertThat(all(tiers.fastOrders()))
                        .as("the fast tier equals the archive: the deposed batch did not land")
                        .isEqualTo(all(tiers.archiveOrders()));
                assertThat(first.applied())
                        .as("the first follower's batch was refused")
                        .isZero();
                FollowerLease held = modes.follower().lease();
                assertThat(held.owner()).isEqualTo("second");

                tiers.archiveOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v3"));
                await().atMost(Duration.ofSeconds(20)).until(() -> state(1).equals("v3"));
                assertThat(first.applied())
                        .as("the deposed follower stays a standby while the lease is held")
                        .isZero();
                assertThat(modes.follower().lease().term())
                        .as("the successor held its lease throughout")
                        .isEqualTo(held.term());
            }
        }
    }

    @Test
    void aFollowerThatStopsCleanlyHandsTheLeaseOverAtOnce() throws Exception {
        Duration longLease = Duration.ofSeconds(30);
        ArchiveFollower first = Shadowing.follower(tiers, "first", longLease, FaultInjection.NONE);
        awaitHolder("first");
        tiers.archiveOrders().insertOne(order(1, NOW, "v1"));
        await().atMost(Duration.ofSeconds(20)).until(() -> state(1).equals("v1"));
        try (ArchiveFollower second = Shadowing.follower(tiers, "second", longLease, FaultInjection.NONE)) {
            Thread.sleep(300);
            assertThat(second.applied()).as("a standby while the lease is held").isZero();
            first.close();
            awaitHolder("second"); // well before the 30 s lease would have run out (the test's timeout)
            tiers.archiveOrders().insertOne(order(2, NOW, "v1"));
            await().atMost(Duration.ofSeconds(20)).until(() -> byId(tiers.fastOrders(), new BsonInt32(2)) != null);
            assertThat(all(tiers.fastOrders())).isEqualTo(all(tiers.archiveOrders()));
            // the follower counts a batch after its transaction commits: the document can be read before the count
            await().atMost(Duration.ofSeconds(20)).until(() -> second.applied() >= 1);
            assertThat(second.applied())
                    .as("the successor resumed after the events its predecessor applied")
                    .isEqualTo(1);
        }
    }

    private void awaitHolder(String instance) {
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            FollowerLease lease = modes.follower().lease();
            return lease != null && lease.owner().equals(instance);
        });
    }

    private String state(int id) {
        BsonDocument d = byId(tiers.fastOrders(), new BsonInt32(id));
        return d == null ? "" : d.getString("state").getValue();
    }
}
