package io.thermocline.tiering.mode;

import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The follower reads updates with {@code fullDocument: updateLookup}: the post-image is the document as the archive
 * holds it when the event is read, possibly after later changes whose events come in a later batch. A shadow comparison
 * counts a difference as a divergence only when no change after the archive read's time was announced ({@code changing}),
 * so a batch must announce a time that covers what its lookups saw, or the fast tier, ahead of that announcement, is
 * blamed for the archive's next write (ShadowHistoryTest diverged once in CI).
 */
@Timeout(60)
class ArchiveFollowerLookupTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();

    @Test
    void aBatchWhoseLookupSawALaterUpdateAnnouncesThatUpdate() throws Exception {
        Shadowing.enter(tiers);
        tiers.archiveOrders().insertOne(order(0, NOW, "v0"));
        tiers.archiveOrders().updateOne(Filters.eq("_id", 0), Updates.set("state", "v1"));
        for (int id = 1; id < 100; id++) { // the follower applies 100 events a batch: the next update is in the second
            tiers.archiveOrders().insertOne(order(id, NOW, "other"));
        }
        BsonTimestamp laterUpdate;
        try (ClientSession session = tiers.archiveSync.startSession()) {
            tiers.archiveOrders().updateOne(session, Filters.eq("_id", 0), Updates.set("state", "v2"));
            laterUpdate = session.getOperationTime();
        }
        Shadowing.Pause afterFirstBatch = new Shadowing.Pause(FaultPoint.FOLLOWER_APPLIED);
        try (ArchiveFollower follower = Shadowing.follower(tiers, "follower", Duration.ofSeconds(5), afterFirstBatch)) {
            afterFirstBatch.awaitReached();
            try {
                assertThat(follower.applied())
                        .as("the first batch held the first update, not the second")
                        .isEqualTo(100);
                assertThat(byId(tiers.fastOrders(), new BsonInt32(0))
                                .getString("state")
                                .getValue())
                        .as("the first update's post-image, looked up after the second update")
                        .isEqualTo("v2");
                BsonTimestamp announced = new ModeStore(tiers.store).follower().changing(TwoTiers.NS);
                assertThat(announced)
                        .as("changing announced with the first batch, the second update written at %s", laterUpdate)
                        .isNotNull()
                        .isGreaterThanOrEqualTo(laterUpdate);
            } finally {
                afterFirstBatch.resume();
            }
        }
    }
}
