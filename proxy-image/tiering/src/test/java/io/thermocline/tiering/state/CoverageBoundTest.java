package io.thermocline.tiering.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.time.Instant;
import java.util.stream.Stream;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CoverageBoundTest {

    static final Instant C = Instant.parse("2026-03-01T00:00:00Z");

    static Stream<Arguments> cases() {
        return Stream.of(
                arguments("nothingCoveredCoversNoAge", CoverageBound.nothing(), Instant.MAX, false),
                arguments("boundCoversAgeAboveIt", CoverageBound.from(C), C.plusMillis(1), true),
                arguments("boundCoversItsOwnInstant", CoverageBound.from(C), C, true),
                arguments("boundDoesNotCoverAgeBelowIt", CoverageBound.from(C), C.minusNanos(1), false),
                arguments("boundDoesNotCoverUnknownAge", CoverageBound.from(C), null, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void covers(String name, CoverageBound bound, Instant age, boolean expected) {
        assertThat(bound.covers(age)).isEqualTo(expected);
    }

    @Test
    void tieringStateGivesNothingCoveredForAnUnknownNamespace() {
        TieringState state = TieringState.initial().withCoverage("shop.orders", CoverageBound.from(C));
        assertThat(state.coverage("shop.orders")).isEqualTo(CoverageBound.from(C));
        assertThat(state.coverage("shop.other")).isEqualTo(CoverageBound.nothing());
    }

    @Test
    void tieringStateSnapshotsAreImmutable() {
        TieringState before = TieringState.initial();
        TieringState after = before.withCoverage("shop.orders", CoverageBound.from(C));
        assertThat(before.coverage("shop.orders")).isEqualTo(CoverageBound.nothing());
        assertThat(after.coverage("shop.orders").covers(C)).isTrue();
    }

    @Test
    void mirroredThroughNeverMovesBackwards() {
        MirroredThrough later = new MirroredThrough(new BsonTimestamp(200, 1));
        MirroredThrough earlier = new MirroredThrough(new BsonTimestamp(100, 9));
        TieringState state = TieringState.initial().withMirroredThrough(later).withMirroredThrough(earlier);
        assertThat(state.mirroredThrough()).isEqualTo(later);
    }

    @Test
    void mirroredThroughCoversCausalPointsAtOrBeforeIt() {
        MirroredThrough mirrored = new MirroredThrough(new BsonTimestamp(100, 5));
        assertThat(mirrored.covers(new BsonTimestamp(100, 5))).isTrue();
        assertThat(mirrored.covers(new BsonTimestamp(100, 4))).isTrue();
        assertThat(mirrored.covers(new BsonTimestamp(100, 6))).isFalse();
        assertThat(mirrored.covers(new BsonTimestamp(101, 0))).isFalse();
        assertThat(MirroredThrough.NOTHING.covers(new BsonTimestamp(0, 1))).isFalse();
    }

    @Test
    void mirroredThroughComparesClusterTimesUnsigned() {
        // Cluster-time seconds are unsigned 32-bit: a time past 2038 must sort after one before it.
        MirroredThrough past2038 = new MirroredThrough(new BsonTimestamp(0x9000_0000, 0));
        MirroredThrough before = new MirroredThrough(new BsonTimestamp(0x7000_0000, 0));
        assertThat(past2038.compareTo(before)).isPositive();
        assertThat(past2038.covers(before.clusterTime())).isTrue();
    }
}
