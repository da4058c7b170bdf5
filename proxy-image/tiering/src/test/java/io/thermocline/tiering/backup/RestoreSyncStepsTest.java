package io.thermocline.tiering.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.config.Mode;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.provenance.Fence;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * restore-sync's steps one by one on two embedded replica sets (no proxy: the fleet is empty, so every phase is
 * acknowledged at once): the refusal without a hold, a hold that is given up, a resync that died after entering Drained.
 */
@Timeout(120)
class RestoreSyncStepsTest {

    @Test
    void aResyncWithoutAHoldIsRefusedAndAHoldCanBeGivenUpBeforeTheArchiveIsTouched() throws Exception {
        try (TwoTiers tiers = new TwoTiers()) {
            Feeder feeder = tiers.feeder();
            tiers.fastOrders().insertOne(TwoTiers.order(1, Instant.now(), "new"));
            tiers.sync();
            RestoreSync restore =
                    new RestoreSync(tiers.fast, tiers.archive, List.of(TwoTiers.POLICY), Clock.systemUTC(), line -> {});
            assertThatThrownBy(restore::resync)
                    .isInstanceOf(RestoreSync.Refusal.class)
                    .hasMessageContaining("restore-sync --hold BEFORE");

            restore.hold(Duration.ofSeconds(30));
            restore.hold(Duration.ofSeconds(30)); // again: nothing changes
            ModeStore modes = new ModeStore(tiers.store);
            assertThat(modes.read().phase()).isEqualTo(Phase.RESTORING);
            assertThat(tiers.store.feederCheckpoint().owner()).isEqualTo(RestoreSync.HOLDER);
            assertThat(tiers.fences
                            .read(null, TwoTiers.NS, List.of(Fence.namespaceId()))
                            .get(Fence.namespaceId())
                            .kind())
                    .isEqualTo(Fence.Kind.DROP_STARTED);
            FeederCheckpoint held = tiers.store.feederCheckpoint();
            assertThatThrownBy(() -> new BackupPoint(tiers.fast, tiers.archive, "test", Clock.systemUTC())
                            .await(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(1), line -> {}))
                    .isInstanceOf(BackupPoint.Refusal.class)
                    .hasMessageContaining("held for a restore");

            restore.cancel();
            assertThat(modes.read().phase()).isEqualTo(Phase.TIERED);
            FeederCheckpoint released = tiers.store.feederCheckpoint();
            assertThat(released.owner()).isNotEqualTo(RestoreSync.HOLDER);
            assertThat(released.mirroredThrough())
                    .as("the feeder resumes where it was")
                    .isGreaterThanOrEqualTo(held.mirroredThrough());
            tiers.fastOrders().insertOne(TwoTiers.order(2, Instant.now(), "new"));
            tiers.sync(); // the feeder took its lease back and mirrors
            assertThat(TwoTiers.byId(tiers.archiveOrders(), new org.bson.BsonInt32(2)))
                    .isNotNull();
            assertThat(TwoTiers.byId(tiers.fastOrders(), new org.bson.BsonInt32(1)))
                    .as("nothing was reset")
                    .isNotNull();
            assertThat(feeder.running()).isTrue();
        }
    }

    @Test
    void aResyncThatDiedAfterEnteringDrainedIsFinishedByTheNextRun() throws Exception {
        try (TwoTiers tiers = new TwoTiers()) {
            tiers.feeder();
            tiers.fastOrders().insertOne(TwoTiers.order(1, Instant.now(), "new"));
            tiers.sync();
            RestoreSync restore =
                    new RestoreSync(tiers.fast, tiers.archive, List.of(TwoTiers.POLICY), Clock.systemUTC(), line -> {});
            restore.hold(Duration.ofSeconds(30));
            // the reset ran and the fleet entered Drained; the process died before it released the feeder
            ModeStore modes = new ModeStore(tiers.store);
            ModeDocument d = modes.read();
            modes.save(d, d.entering(Mode.DRAINING, Phase.DRAINED, Instant.now()));
            assertThat(tiers.store.feederCheckpoint().owner()).isEqualTo(RestoreSync.HOLDER);

            RestoreSync.Result result = restore.resync();
            assertThat(tiers.store.feederCheckpoint().owner()).isNotEqualTo(RestoreSync.HOLDER);
            assertThat(tiers.store.feederCheckpoint().mirroredThrough()).isGreaterThanOrEqualTo(result.feederFrom());
            assertThat(modes.read().phase()).isEqualTo(Phase.DRAINED);
            tiers.sync(); // a feeder streams again
            assertThatThrownBy(restore::resync)
                    .as("finished: nothing left to do")
                    .isInstanceOf(RestoreSync.Refusal.class);
        }
    }
}
