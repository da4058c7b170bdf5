package io.thermocline.tiering.mode;

import static io.thermocline.tiering.TwoTiers.all;
import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.model.Filters;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The delete fence in shadow mode: the warmer has read a document from the archive and is about to copy it
 * when the archive deletes it and the follower applies the delete (nothing to delete in the fast tier yet).
 * Without the fence the follower writes with its delete, the warm copy would resurrect a document the archive
 * no longer has, and nothing would ever remove it.
 */
@Timeout(60)
class ArchiveFollowerDeleteFenceTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();

    @Test
    void anArchiveDeleteAppliedWhileAWarmCopyIsInFlightIsNotUndoneByTheCopy() throws Exception {
        tiers.archiveOrders()
                .insertMany(
                        List.of(order(1, NOW.minusSeconds(60), "kept"), order(2, NOW.minusSeconds(120), "deleted")));
        Shadowing.enter(tiers);
        tiers.feeder(); // the warmer's barrier needs it; it has nothing to mirror in shadow
        Shadowing.Pause beforeCopy = new Shadowing.Pause(FaultPoint.WARMER_BEFORE_COPY);
        Warmer warmer = tiers.warmer(10, TwoTiers.warmerOptions(beforeCopy));
        try (ArchiveFollower follower =
                Shadowing.follower(tiers, "follower", Duration.ofSeconds(5), FaultInjection.NONE)) {
            CompletableFuture<Boolean> warming = CompletableFuture.supplyAsync(() -> {
                try {
                    return warmer.warmAll();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            beforeCopy.awaitReached(); // the warmer holds both documents as the archive had them
            long before = follower.applied();
            tiers.archiveOrders().deleteOne(Filters.eq("_id", 2));
            await().atMost(Duration.ofSeconds(20)).until(() -> follower.applied() > before);
            beforeCopy.resume();
            assertThat(warming.get(30, TimeUnit.SECONDS)).isTrue();

            assertThat(byId(tiers.fastOrders(), new BsonInt32(2)))
                    .as("the deleted document was not resurrected")
                    .isNull();
            assertThat(all(tiers.fastOrders())).isEqualTo(all(tiers.archiveOrders()));
        }
    }
}
