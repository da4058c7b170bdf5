package io.thermocline.tiering.mode;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The follower half of the cutover gate: a cutover refuses writes until the archive follower applied the archive
 * through the cutover point, so it starts only with a follower that is running, not resyncing, and in step.
 */
@Timeout(60)
class CutoverGateTest {

    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
    private static final BsonTimestamp ARCHIVE_NOW = new BsonTimestamp(1_800_000_100, 3);
    private static final FollowerLease LIVE = new FollowerLease("feeder-0", 4, NOW.plusSeconds(20));

    private static FollowerState follower(FollowerLease lease, FollowerResync resync, BsonTimestamp applied) {
        return new FollowerState(null, null, applied, Map.of(), lease, resync);
    }

    @Test
    void aRunningFollowerInStepLetsTheCutoverGo() {
        assertThat(CutoverGate.follower(follower(LIVE, null, new BsonTimestamp(1_800_000_095, 1)), ARCHIVE_NOW, NOW)).isEmpty();
        FollowerResync finished = new FollowerResync(1, NOW.minusSeconds(60), NOW.minusSeconds(30), "history lost", 10, 2);
        assertThat(CutoverGate.follower(follower(LIVE, finished, ARCHIVE_NOW), ARCHIVE_NOW, NOW)).isEmpty();
    }

    @Test
    void aStoppedResyncingOrLaggingFollowerHoldsTheCutoverBackWithTheReason() {
        assertThat(CutoverGate.follower(follower(null, null, null), ARCHIVE_NOW, NOW)).get().asString()
                .contains("not running").contains("no feeder ever held its lease");
        FollowerLease expired = new FollowerLease("feeder-0", 4, NOW.minusSeconds(1));
        assertThat(CutoverGate.follower(follower(expired, null, ARCHIVE_NOW), ARCHIVE_NOW, NOW)).get().asString()
                .contains("the lease of feeder-0 expired");
        FollowerResync running = new FollowerResync(1, NOW.minusSeconds(60), null, "history lost", 10, 2);
        assertThat(CutoverGate.follower(follower(LIVE, running, ARCHIVE_NOW), ARCHIVE_NOW, NOW)).get().asString()
                .contains("resyncing").contains("history lost");
        assertThat(CutoverGate.follower(follower(LIVE, null, new BsonTimestamp(1_800_000_000, 1)), ARCHIVE_NOW, NOW)).get().asString()
                .contains("100 s behind the archive");
        assertThat(CutoverGate.follower(follower(LIVE, null, null), ARCHIVE_NOW, NOW)).get().asString().contains("not yet in step");
        assertThat(CutoverGate.follower(follower(LIVE, null, ARCHIVE_NOW), null, NOW)).get().asString().contains("the archive did not answer");
    }
}
