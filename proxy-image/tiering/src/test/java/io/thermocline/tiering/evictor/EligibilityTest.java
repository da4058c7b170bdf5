package io.thermocline.tiering.evictor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class EligibilityTest {

    static final Instant CUTOFF = Instant.parse("2026-01-01T00:00:00Z");
    static final Optional<Instant> OLD = Optional.of(CUTOFF.minusSeconds(1));
    static final BsonDocument V1 = BsonDocument.parse("{_id: 1, v: 1}");
    static final BsonDocument V2 = BsonDocument.parse("{_id: 1, v: 2}");

    static Stream<Arguments> cases() {
        return Stream.of(
                arguments("oldMirroredAndIdenticalIsEvicted", OLD, true, true, V1, V1, Eligibility.EVICT),
                arguments("oldAndMirroredWithoutVerificationIsEvicted", OLD, true, false, V1, null, Eligibility.EVICT),
                arguments("exactlyAtCutoffStaysInWindow", Optional.of(CUTOFF), true, true, V1, V1, Eligibility.INSIDE_WINDOW),
                arguments("newerStays", Optional.of(CUTOFF.plusSeconds(1)), true, true, V1, V1, Eligibility.INSIDE_WINDOW),
                arguments("noAgeIsNeverEvicted", Optional.empty(), true, true, V1, V1, Eligibility.NO_AGE),
                arguments("feederBehindKeepsIt", OLD, false, true, V1, V1, Eligibility.FEEDER_BEHIND),
                arguments("feederBehindKeepsItEvenUnverified", OLD, false, false, V1, null, Eligibility.FEEDER_BEHIND),
                arguments("missingArchiveCopyKeepsIt", OLD, true, true, V1, null, Eligibility.NOT_IN_ARCHIVE),
                arguments("differentArchiveCopyKeepsIt", OLD, true, true, V2, V1, Eligibility.ARCHIVE_DIFFERS));
    }

    static Stream<Arguments> deadLettered() {
        return Stream.of(
                arguments("deadLetteredUnverifiedIsKept", OLD, true, false, V1, null, Eligibility.DEAD_LETTERED),
                arguments("deadLetteredEvenWithAnIdenticalArchiveCopyIsKept", OLD, true, true, V1, V1, Eligibility.DEAD_LETTERED),
                arguments("deadLetteredButFeederBehindWaits", OLD, false, false, V1, null, Eligibility.FEEDER_BEHIND),
                arguments("deadLetteredInsideTheWindowStays", Optional.of(CUTOFF), true, false, V1, null, Eligibility.INSIDE_WINDOW));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deadLettered")
    void aDeadLetteredDocumentIsNeverEvicted(String name, Optional<Instant> age, boolean mirrored, boolean verify, BsonDocument fast,
                                              BsonDocument archive, Eligibility expected) {
        assertThat(Eligibility.decide(age, CUTOFF, mirrored, verify, true, fast, archive)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(String name, Optional<Instant> age, boolean mirrored, boolean verify, BsonDocument fast, BsonDocument archive,
                 Eligibility expected) {
        assertThat(Eligibility.decide(age, CUTOFF, mirrored, verify, false, fast, archive)).isEqualTo(expected);
    }
}
