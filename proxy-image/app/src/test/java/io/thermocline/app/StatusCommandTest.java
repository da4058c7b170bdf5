package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.tiering.mode.FollowerLease;
import io.thermocline.tiering.mode.FollowerResync;
import io.thermocline.tiering.mode.FollowerState;
import java.time.Instant;
import java.util.Map;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The follower's line of {@code thermocline status}: an operator must see a running resync and who follows. */
@Timeout(10)
class StatusCommandTest {

    static final Instant AT = Instant.parse("2026-12-01T18:00:00Z");

    @Test
    void aRunningResyncAndTheLeaseHolderAreShown() {
        FollowerState state = new FollowerState(new BsonTimestamp(1, 1), null, new BsonTimestamp(1796148908, 7), Map.of(),
                new FollowerLease("feeder-1", 3, AT.plusSeconds(10)),
                new FollowerResync(2, AT, null, "archive change stream history lost (code 286)", 40, 2));
        assertThat(StatusCommand.follower(state.toStatus())).isEqualTo("follower  held by feeder-1 (term 3), applied through 1796148908.7; "
                + "resync 2 RUNNING since 2026-12-01T18:00:00Z: archive change stream history lost (code 286), 40 copied, 2 deleted\n");
    }

    @Test
    void noFollowerYetSaysSo() {
        assertThat(StatusCommand.follower(FollowerState.none().toStatus())).isEqualTo("follower  not running\n");
    }
}
