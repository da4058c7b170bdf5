package io.thermocline.tiering.provenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.bson.BsonInt32;
import org.bson.types.ObjectId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CopyUpDecisionTest {

    static final Fence OLD_DELETE = new Fence("d.c", new BsonInt32(1), Fence.Kind.USER_DELETE, new ObjectId(), Instant.EPOCH);
    static final Fence NEW_DELETE = new Fence("d.c", new BsonInt32(1), Fence.Kind.USER_DELETE, new ObjectId(), Instant.EPOCH);
    static final Fence EVICTION = new Fence("d.c", new BsonInt32(1), Fence.Kind.EVICTION, new ObjectId(), Instant.EPOCH);
    static final Duration QUICK = Duration.ofSeconds(1);
    static final Duration LIMIT = Duration.ofMinutes(5);

    static Stream<Arguments> cases() {
        return Stream.of(
                arguments("neverDeletedAndAbsentIsCopied", null, null, true, false, QUICK, CopyUpDecision.COPY),
                arguments("deletedBeforeTheReadAndUnchangedIsCopied", OLD_DELETE, OLD_DELETE, true, false, QUICK, CopyUpDecision.COPY),
                arguments("userDeleteDuringTheCopyIsNotResurrected", null, NEW_DELETE, true, false, QUICK, CopyUpDecision.SKIP_DELETED_SINCE_READ),
                arguments("secondUserDeleteDuringTheCopyIsNotResurrected", OLD_DELETE, NEW_DELETE, true, false, QUICK, CopyUpDecision.SKIP_DELETED_SINCE_READ),
                arguments("evictionDuringTheCopyMeansTheReadMayBeStale", null, EVICTION, true, false, QUICK, CopyUpDecision.SKIP_DELETED_SINCE_READ),
                arguments("fastTierVersionIsNeverOverwritten", null, null, true, true, QUICK, CopyUpDecision.SKIP_FAST_TIER_HAS_IT),
                arguments("goneFromArchiveIsNotCopied", null, null, false, false, QUICK, CopyUpDecision.SKIP_NOT_IN_ARCHIVE),
                arguments("tooSlowACopyGivesUpBecauseFencesMayHaveExpired", null, null, true, false, LIMIT.plusSeconds(1), CopyUpDecision.SKIP_TOO_SLOW));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(String name, Fence atRead, Fence now, boolean inArchive, boolean inFast, Duration inFlight, CopyUpDecision expected) {
        assertThat(CopyUpDecision.decide(atRead, now, inArchive, inFast, inFlight, LIMIT)).isEqualTo(expected);
    }

    static final Instant T = Instant.parse("2026-12-01T12:00:00Z");
    static final Fence DROP_STARTED = new Fence("d.c", Fence.namespaceId(), Fence.Kind.DROP_STARTED, new ObjectId(), T);
    static final Fence DROPPED = new Fence("d.c", Fence.namespaceId(), Fence.Kind.DROPPED, new ObjectId(), T);

    static Stream<Arguments> drops() {
        return Stream.of(
                arguments("neverDroppedCopies", null, null, T, false),
                arguments("aDropStartedSinceTheReadSkips", null, DROP_STARTED, T, true),
                arguments("aDropDoneSinceTheReadSkips", DROP_STARTED, DROPPED, T, true),
                arguments("aDropDoneBeforeTheReadCopies", DROPPED, DROPPED, T.plusSeconds(1), false),
                arguments("aDropUnderWayAtTheReadSkips", DROP_STARTED, DROP_STARTED, T.plusSeconds(1), true),
                arguments("aDropThatNeverFinishedStopsBlockingAfterTheInFlightBound", DROP_STARTED, DROP_STARTED, T.plus(LIMIT).plusSeconds(1), false),
                arguments("aPurgedDropFenceDoesNotBlock", DROPPED, null, T, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("drops")
    void decidesOnDrops(String name, Fence atRead, Fence now, Instant at, boolean skipped) {
        assertThat(CopyUpDecision.namespaceDropped(atRead, now, at, LIMIT)).isEqualTo(skipped);
    }
}
