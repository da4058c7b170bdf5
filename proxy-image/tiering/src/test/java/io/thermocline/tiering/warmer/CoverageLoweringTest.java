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

    static final io.thermocline.config.CollectionPolicy BY_DATE =
            new io.thermocline.config.CollectionPolicy("shop", "orders", "createdAt", java.time.Duration.ofHours(1));
    static final io.thermocline.config.CollectionPolicy BY_LINE =
            new io.thermocline.config.CollectionPolicy("shop", "orders", "lines.at", java.time.Duration.ofHours(1));

    static org.bson.BsonDateTime date(Instant t) {
        return new org.bson.BsonDateTime(t.toEpochMilli());
    }

    static org.bson.BsonDocument aged(org.bson.BsonValue age) {
        return new org.bson.BsonDocument("_id", new org.bson.BsonInt32(1)).append("createdAt", age);
    }

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> walkKeys() {
        var array = new org.bson.BsonArray(java.util.List.of(date(T10), date(T20), new org.bson.BsonInt64(5)));
        var lines = new org.bson.BsonDocument("_id", new org.bson.BsonInt32(1)).append("lines", new org.bson.BsonArray(java.util.List.of(
                new org.bson.BsonDocument("at", date(T15)), new org.bson.BsonDocument("at", date(T20)), new org.bson.BsonDocument("x", date(T10)))));
        return java.util.stream.Stream.of(
                org.junit.jupiter.params.provider.Arguments.arguments(BY_DATE, aged(date(T10)), date(T10)),
                org.junit.jupiter.params.provider.Arguments.arguments(BY_DATE, aged(array), date(T20)),
                org.junit.jupiter.params.provider.Arguments.arguments(BY_DATE, new org.bson.BsonDocument("_id", new org.bson.BsonInt32(1)), org.bson.BsonNull.VALUE),
                org.junit.jupiter.params.provider.Arguments.arguments(BY_LINE, lines, date(T20)));
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("walkKeys")
    void walkKeyIsMongoDbsDescendingSortKey(io.thermocline.config.CollectionPolicy policy, org.bson.BsonDocument document,
                                           org.bson.BsonValue expected) {
        assertThat(CoverageLowering.walkKey(policy, document)).isEqualTo(expected);
    }

    @Test
    void aDateKeyProvesTheNextMillisecondUnlessNumberAgedDocumentsWait() {
        assertThat(CoverageLowering.provenBy(BY_DATE, date(T10), false)).contains(T10.plusMillis(1));
        assertThat(CoverageLowering.provenBy(BY_DATE, date(T10), true)).isEmpty();
    }

    @Test
    void aNumberKeyProvesItsEpochMillisecondAge() {
        assertThat(CoverageLowering.provenBy(BY_DATE, new org.bson.BsonDouble(T10.toEpochMilli() + 0.5), false))
                .contains(T10.plusMillis(1));
    }

    @Test
    void keysThatAreNoAgeProveNothing() {
        // before the fix an unreadable last age proved the cutoff: coverage over documents never copied
        assertThat(CoverageLowering.provenBy(BY_DATE, org.bson.BsonNull.VALUE, false)).isEmpty();
        assertThat(CoverageLowering.provenBy(BY_DATE, new org.bson.BsonString("2026-01-10T00:00:00Z"), false)).isEmpty();
        assertThat(CoverageLowering.provenBy(BY_DATE, new org.bson.BsonTimestamp(1, 1), false)).isEmpty();
        assertThat(CoverageLowering.provenBy(BY_DATE, new org.bson.BsonDouble(Double.NaN), false)).isEmpty();
    }
}
