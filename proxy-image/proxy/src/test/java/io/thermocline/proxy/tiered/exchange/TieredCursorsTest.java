package io.thermocline.proxy.tiered.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.cursor.CursorRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class TieredCursorsTest {

    private static final TieredCursors.Basis BASIS = new TieredCursors.Archive(new BsonTimestamp(7, 1));
    private final AtomicLong nanos = new AtomicLong();
    private final TieredCursors cursors = new TieredCursors(2, TieredCursors.IDLE, nanos::get);

    @Test
    void aCursorNoGetMoreUsedLongAfterTheCursorTableDroppedItIsForgottenAndAUsedOneKept() {
        assertThat(TieredCursors.IDLE).isGreaterThan(CursorRegistry.IDLE_TIMEOUT);
        cursors.opened(1, BASIS, false);
        cursors.opened(2, BASIS, false);
        nanos.addAndGet(Duration.ofMinutes(40).toNanos());
        assertThat(cursors.get(1)).isEqualTo(BASIS);
        nanos.addAndGet(Duration.ofMinutes(40).toNanos());
        assertThat(cursors.get(2)).as("idle 80 minutes").isNull();
        assertThat(cursors.get(1)).as("used 40 minutes ago").isEqualTo(BASIS);
    }

    @Test
    void aNoCursorTimeoutCursorIsKeptHoweverLongItIdles() {
        cursors.opened(1, BASIS, true);
        nanos.addAndGet(Duration.ofDays(2).toNanos());
        assertThat(cursors.get(1)).isEqualTo(BASIS);
        cursors.closed(1);
        assertThat(cursors.get(1)).isNull();
    }

    @Test
    void pastCapacityTheLeastRecentlyUsedCursorIsForgotten() {
        cursors.opened(1, BASIS, false);
        cursors.opened(2, BASIS, false);
        cursors.get(1);
        cursors.opened(3, BASIS, false);
        assertThat(cursors.get(2)).isNull();
        assertThat(cursors.get(1)).isEqualTo(BASIS);
        assertThat(cursors.get(3)).isEqualTo(BASIS);
    }

    @Test
    void cursorIdZeroIsNeverRemembered() {
        cursors.opened(0, BASIS, false);
        assertThat(cursors.get(0)).isNull();
    }
}
