package io.thermocline.tiering.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BsonOrderTest {

    static Stream<Arguments> equal() {
        return Stream.of(
                arguments(new BsonInt32(1), new BsonDouble(1.0)),
                arguments(new BsonInt32(1), new BsonInt64(1)),
                arguments(new BsonInt64(1), new BsonDecimal128(Decimal128.parse("1.000"))),
                arguments(new BsonDouble(0.0), new BsonDouble(-0.0)),
                arguments(new BsonDecimal128(Decimal128.parse("-0")), new BsonInt32(0)),
                arguments(new BsonDouble(Double.NaN), new BsonDecimal128(Decimal128.NaN)),
                arguments(new BsonDouble(Double.POSITIVE_INFINITY), new BsonDecimal128(Decimal128.POSITIVE_INFINITY)),
                arguments(new BsonDocument("a", new BsonInt32(1)), new BsonDocument("a", new BsonDouble(1))),
                arguments(new BsonArray(List.of(new BsonInt32(1))), new BsonArray(List.of(new BsonInt64(1)))));
    }

    @ParameterizedTest
    @MethodSource("equal")
    void valuesMongoDbTreatsAsEqualCompareEqualAndHashAlike(BsonValue a, BsonValue b) {
        assertThat(BsonOrder.compare(a, b)).isZero();
        assertThat(BsonOrder.compare(b, a)).isZero();
        assertThat(BsonOrder.hash(a)).isEqualTo(BsonOrder.hash(b));
    }

    static Stream<Arguments> ascending() {
        return Stream.of(
                arguments(new BsonMinKey(), BsonNull.VALUE),
                arguments(BsonNull.VALUE, new BsonDouble(Double.NaN)),
                arguments(new BsonDouble(Double.NaN), new BsonDouble(Double.NEGATIVE_INFINITY)),
                arguments(new BsonDecimal128(Decimal128.parse("0.1")), new BsonDouble(0.1)), // binary 0.1 is just above 0.1
                arguments(new BsonInt64(Long.MAX_VALUE - 1), new BsonInt64(Long.MAX_VALUE)),
                arguments(new BsonInt32(5), new BsonString("1")),
                arguments(new BsonString("Z"), new BsonString("a")),
                arguments(new BsonString("z"), new BsonString("\u00e9")), // UTF-8 bytes, not UTF-16 units
                arguments(new BsonString("zzz"), new BsonDocument()),
                arguments(new BsonDocument("a", new BsonInt32(1)).append("b", new BsonInt32(2)),
                        new BsonDocument("b", new BsonInt32(2)).append("a", new BsonInt32(1))),
                arguments(new BsonDocument("a", new BsonInt32(1)), new BsonDocument("a", new BsonInt32(1)).append("b", BsonNull.VALUE)),
                arguments(new BsonDocument("z", new BsonArray()), new BsonArray()),
                arguments(new BsonArray(), new BsonObjectId(new ObjectId())),
                arguments(new BsonObjectId(new ObjectId()), BsonBoolean.FALSE),
                arguments(BsonBoolean.FALSE, BsonBoolean.TRUE),
                arguments(BsonBoolean.TRUE, new BsonDateTime(-5)),
                arguments(new BsonDateTime(-5), new BsonDateTime(3)),
                arguments(new BsonDateTime(Long.MAX_VALUE), new BsonTimestamp(0, 0)),
                arguments(new BsonTimestamp(1, 0), new BsonTimestamp(0x8000_0000, 0)),
                arguments(new BsonTimestamp(0x8000_0000, 0), new BsonMaxKey()));
    }

    @ParameterizedTest
    @MethodSource("ascending")
    void sortsAsMongoDb(BsonValue lower, BsonValue higher) {
        assertThat(BsonOrder.compare(lower, higher)).isNegative();
        assertThat(BsonOrder.compare(higher, lower)).isPositive();
    }
}
