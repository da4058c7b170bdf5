package io.thermocline.tiering.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.thermocline.config.CollectionPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AgeValueTest {

    static final CollectionPolicy BY_DATE = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofDays(30));
    static final CollectionPolicy BY_ID = new CollectionPolicy("shop", "events", "_id", Duration.ofDays(30));
    static final CollectionPolicy BY_NESTED = new CollectionPolicy("shop", "audit", "meta.ts", Duration.ofDays(30));
    static final Instant T = Instant.parse("2026-03-01T10:00:00Z");

    static Stream<Arguments> values() {
        ObjectId oid = AgeValue.smallestObjectIdOfSecond(T.getEpochSecond());
        ObjectId after2038 = AgeValue.smallestObjectIdOfSecond(0x9000_0000L);
        return Stream.of(
                arguments("dateReadsAsItsInstant", BY_DATE, new BsonDateTime(T.toEpochMilli()), T, AgeValue.Encoding.DATE),
                arguments("int64ReadsAsEpochMillis", BY_DATE, new BsonInt64(T.toEpochMilli()), T, AgeValue.Encoding.EPOCH_MILLIS),
                arguments("int32ReadsAsEpochMillisNotSeconds", BY_DATE, new BsonInt32(1_700_000_000), Instant.ofEpochMilli(1_700_000_000L), AgeValue.Encoding.EPOCH_MILLIS),
                arguments("doubleIsFlooredToAWholeMillisecond", BY_DATE, new BsonDouble(1000.9), Instant.ofEpochMilli(1000), AgeValue.Encoding.EPOCH_MILLIS),
                arguments("negativeDoubleFloorsDownward", BY_DATE, new BsonDouble(-0.5), Instant.ofEpochMilli(-1), AgeValue.Encoding.EPOCH_MILLIS),
                arguments("decimal128ReadsAsEpochMillis", BY_DATE, new BsonDecimal128(Decimal128.parse("1772359200000.7")), T, AgeValue.Encoding.EPOCH_MILLIS),
                arguments("positiveInfinityIsTheLatestAge", BY_DATE, new BsonDouble(Double.POSITIVE_INFINITY), Instant.ofEpochMilli(Long.MAX_VALUE), AgeValue.Encoding.EPOCH_MILLIS),
                arguments("decimalInfinityIsTheLatestAge", BY_DATE, new BsonDecimal128(Decimal128.POSITIVE_INFINITY), Instant.ofEpochMilli(Long.MAX_VALUE), AgeValue.Encoding.EPOCH_MILLIS),
                arguments("hugeDoubleClampsInsteadOfOverflowing", BY_DATE, new BsonDouble(1e300), Instant.ofEpochMilli(Long.MAX_VALUE), AgeValue.Encoding.EPOCH_MILLIS),
                arguments("isoStringWithZuluReadsAsInstant", BY_DATE, new BsonString("2026-03-01T10:00:00Z"), T, AgeValue.Encoding.ISO_STRING),
                arguments("isoStringWithOffsetIsNormalisedToUtc", BY_DATE, new BsonString("2026-03-01T12:00:00+02:00"), T, AgeValue.Encoding.ISO_STRING),
                arguments("bareIsoDateIsMidnightUtc", BY_DATE, new BsonString("2026-03-01"), Instant.parse("2026-03-01T00:00:00Z"), AgeValue.Encoding.ISO_STRING),
                arguments("objectIdUnderIdPolicyIsItsCreationSecond", BY_ID, new BsonObjectId(oid), T, AgeValue.Encoding.OBJECT_ID),
                arguments("objectIdTimestampIsUnsignedPast2038", BY_ID, new BsonObjectId(after2038), Instant.ofEpochSecond(0x9000_0000L), AgeValue.Encoding.OBJECT_ID),
                arguments("arrayIsAgedByItsLatestElement", BY_DATE, new BsonArray(List.of(new BsonDateTime(0), new BsonDateTime(T.toEpochMilli()), new BsonString("x"))), T, AgeValue.Encoding.DATE),
                arguments("arrayPrefersOrderPreservingElementsOverLaterStrings", BY_DATE,
                        new BsonArray(List.of(new BsonDateTime(T.toEpochMilli()), new BsonString("2030-01-01T00:00:00Z"))), T, AgeValue.Encoding.DATE),
                arguments("arrayOfOnlyStringsIsAgedByItsLatestString", BY_DATE,
                        new BsonArray(List.of(new BsonString("2020-01-01"), new BsonString("2026-03-01T10:00:00Z"))), T, AgeValue.Encoding.ISO_STRING));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("values")
    void readsAge(String name, CollectionPolicy policy, BsonValue value, Instant expected, AgeValue.Encoding encoding) {
        assertThat(AgeValue.of(policy, value)).contains(new AgeValue(expected, encoding));
    }

    static Stream<Arguments> unreadable() {
        return Stream.of(
                arguments("nullHasNoAge", BY_DATE, BsonNull.VALUE),
                arguments("missingHasNoAge", BY_DATE, null),
                arguments("booleanHasNoAge", BY_DATE, BsonBoolean.TRUE),
                arguments("doubleNaNHasNoAge", BY_DATE, new BsonDouble(Double.NaN)),
                arguments("decimalNaNHasNoAge", BY_DATE, new BsonDecimal128(Decimal128.NaN)),
                arguments("nonDateStringHasNoAge", BY_DATE, new BsonString("zzz")),
                arguments("localDateTimeWithoutOffsetIsAmbiguousSoHasNoAge", BY_DATE, new BsonString("2026-03-01T10:00:00")),
                arguments("objectIdUnderDateFieldPolicyHasNoAge", BY_DATE, new BsonObjectId(new ObjectId())),
                arguments("dateUnderIdPolicyHasNoAge", BY_ID, new BsonDateTime(T.toEpochMilli())),
                arguments("stringIdUnderIdPolicyHasNoAge", BY_ID, new BsonString("user42")),
                arguments("emptyArrayHasNoAge", BY_DATE, new BsonArray()),
                arguments("nestedArraysAreNotLookedInto", BY_DATE, new BsonArray(List.of(new BsonArray(List.of(new BsonDateTime(1)))))),
                arguments("embeddedDocumentHasNoAge", BY_DATE, new BsonDocument("$date", new BsonInt64(1))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unreadable")
    void hasNoAge(String name, CollectionPolicy policy, BsonValue value) {
        assertThat(AgeValue.of(policy, value)).isEmpty();
    }

    @Test
    void onlyIsoStringsHaveAnOrderThatDiffersFromTime() {
        assertThat(AgeValue.Encoding.ISO_STRING.orderMatchesTime()).isFalse();
        assertThat(List.of(AgeValue.Encoding.DATE, AgeValue.Encoding.EPOCH_MILLIS, AgeValue.Encoding.OBJECT_ID))
                .allMatch(AgeValue.Encoding::orderMatchesTime);
    }

    @Test
    void numericAgesAreMonotonicInBsonNumericOrder() {
        List<BsonValue> ascending = List.of(
                new BsonDouble(Double.NEGATIVE_INFINITY), new BsonDouble(-1e300), new BsonInt64(Long.MIN_VALUE),
                new BsonDouble(-1.5), new BsonInt32(-1), new BsonDouble(-0.2), new BsonInt32(0), new BsonDouble(0.99),
                new BsonDecimal128(Decimal128.parse("1.01")), new BsonInt32(2), new BsonInt64(1_772_359_200_000L),
                new BsonDouble(1_772_359_200_000.5), new BsonInt64(Long.MAX_VALUE), new BsonDouble(1e300),
                new BsonDecimal128(Decimal128.POSITIVE_INFINITY));
        for (int i = 1; i < ascending.size(); i++) {
            Instant lower = AgeValue.of(BY_DATE, ascending.get(i - 1)).orElseThrow().instant();
            Instant higher = AgeValue.of(BY_DATE, ascending.get(i)).orElseThrow().instant();
            assertThat(higher).as("age of %s vs %s", ascending.get(i), ascending.get(i - 1)).isAfterOrEqualTo(lower);
        }
    }

    static Stream<Arguments> documents() {
        BsonDateTime t = new BsonDateTime(T.toEpochMilli());
        BsonDateTime old = new BsonDateTime(0);
        return Stream.of(
                arguments("topLevelFieldIsRead", BY_DATE, new BsonDocument("createdAt", t), Optional.of(T)),
                arguments("missingFieldHasNoAge", BY_DATE, new BsonDocument("other", t), Optional.empty()),
                arguments("dottedFieldFollowsEmbeddedDocuments", BY_NESTED, BsonDocument.parse("{meta: {ts: {$date: '2026-03-01T10:00:00Z'}}}"), Optional.of(T)),
                arguments("dottedFieldThroughArrayOfDocumentsTakesLatest", BY_NESTED,
                        new BsonDocument("meta", new BsonArray(List.of(new BsonDocument("ts", old), new BsonDocument("ts", t)))), Optional.of(T)),
                arguments("dottedFieldOnScalarHasNoAge", BY_NESTED, new BsonDocument("meta", t), Optional.empty()),
                arguments("arrayLeafTakesLatest", BY_DATE, new BsonDocument("createdAt", new BsonArray(List.of(t, old))), Optional.of(T)),
                arguments("numericPathComponentIndexesAnArray", new CollectionPolicy("d", "c", "meta.1.ts", Duration.ofDays(1)),
                        new BsonDocument("meta", new BsonArray(List.of(new BsonDocument("ts", old), new BsonDocument("ts", t)))), Optional.of(T)),
                arguments("idPolicyReadsTheDocumentId", BY_ID, new BsonDocument("_id", new BsonObjectId(AgeValue.smallestObjectIdOfSecond(T.getEpochSecond()))), Optional.of(T)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documents")
    void readsDocumentAge(String name, CollectionPolicy policy, BsonDocument document, Optional<Instant> expected) {
        assertThat(AgeValue.ofDocument(policy, document).map(AgeValue::instant)).isEqualTo(expected);
    }

    @Test
    void coveredSetOfAnIdPolicyStartsAtTheFirstObjectIdOfTheNextWholeSecond() {
        BsonDocument filter = AgeValue.atOrAfter(BY_ID, T.plusMillis(1));
        ObjectId expected = AgeValue.smallestObjectIdOfSecond(T.getEpochSecond() + 1);
        assertThat(filter).isEqualTo(new BsonDocument("_id", new BsonDocument("$gte", new BsonObjectId(expected))));
    }

    @Test
    void coveredSetOfADateFieldPolicyTakesDatesAndEpochNumbersButNotStrings() {
        BsonDocument filter = AgeValue.atOrAfter(BY_DATE, T.plusNanos(1));
        long ceil = T.toEpochMilli() + 1;
        assertThat(filter).isEqualTo(BsonDocument.parse(
                "{$or: [{createdAt: {$gte: {$date: {$numberLong: '" + ceil + "'}}}}, {createdAt: {$gte: {$numberLong: '" + ceil + "'}}}]}"));
    }

    @Test
    void smallestObjectIdOfSecondSortsBeforeEveryObjectIdOfThatSecond() {
        ObjectId smallest = AgeValue.smallestObjectIdOfSecond(T.getEpochSecond());
        ObjectId generated = new ObjectId(java.util.Date.from(T));
        assertThat(smallest.getTimestamp()).isEqualTo(generated.getTimestamp());
        assertThat(smallest.compareTo(generated)).isLessThanOrEqualTo(0);
    }
}
