package io.thermocline.tiering.warmer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class CoverageLoweringTest {

    static final Instant T10 = Instant.parse("2026-01-10T00:00:00Z");
    static final Instant T20 = Instant.parse("2026-01-20T00:00:00Z");
    static final Instant T15 = Instant.parse("2026-01-15T00:00:00Z");

    @Test
    void firstBatchFromTheTopTurnsNothingIntoABound() {
        assertThat(CoverageLowering.lower(null, T20, null, true)).isEqualTo(T20);
    }

    @Test
    void aWalkNotFromTheTopProvesNothing() {
        assertThat(CoverageLowering.lower(null, T20, null, false)).isNull();
    }

    @Test
    void boundOnlyGoesDown() {
        assertThat(CoverageLowering.lower(T15, T10, null, true)).isEqualTo(T10);
        assertThat(CoverageLowering.lower(T10, T20, null, true)).isEqualTo(T10);
    }

    @Test
    void neverBelowWhatTheEvictorMayHaveRemoved() {
        assertThat(CoverageLowering.lower(T20, T10, T15, true)).isEqualTo(T15);
        assertThat(CoverageLowering.lower(null, T10, T15, true)).isEqualTo(T15);
    }
}
