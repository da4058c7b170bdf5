package io.thermocline.tiering.state;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * MongoDB's comparison order of BSON values (no collation), the order its sorts, range queries and
 * {@code _id} equality use: first the canonical type (MinKey, null, numbers, strings, objects,
 * arrays, binary, ObjectId, booleans, dates, timestamps, regular expressions, MaxKey), then the
 * value. Numbers compare by value across int32, int64, double and decimal128 (NaN below every
 * other number); strings by their UTF-8 bytes; embedded documents field by field in their order.
 * Java's {@code equals} differs on all three (1 vs 1.0; documents compare as maps).
 */
public final class BsonOrder {

    /** The comparator; {@code compare(a, b) == 0} exactly when MongoDB treats a and b as equal. */
    public static final Comparator<BsonValue> COMPARATOR = BsonOrder::compare;

    private BsonOrder() {
    }

    public static int compare(BsonValue a, BsonValue b) {
        int byType = Integer.compare(rank(a.getBsonType()), rank(b.getBsonType()));
        if (byType != 0) {
            return byType;
        }
        return switch (a.getBsonType()) {
            case MIN_KEY, MAX_KEY, NULL, UNDEFINED -> 0;
            case INT32, INT64, DOUBLE, DECIMAL128 -> compareNumbers(a, b);
            case STRING, SYMBOL -> compareBytes(utf8(text(a)), utf8(text(b)));
            case DOCUMENT -> compareDocuments(a.asDocument().entrySet().iterator(), b.asDocument().entrySet().iterator());
            case ARRAY -> compareArrays(a.asArray().getValues(), b.asArray().getValues());
            case BINARY -> compareBinary(a, b);
            case OBJECT_ID -> a.asObjectId().getValue().compareTo(b.asObjectId().getValue());
            case BOOLEAN -> Boolean.compare(a.asBoolean().getValue(), b.asBoolean().getValue());
            case DATE_TIME -> Long.compare(a.asDateTime().getValue(), b.asDateTime().getValue());
            case TIMESTAMP -> Long.compareUnsigned(a.asTimestamp().getValue(), b.asTimestamp().getValue());
            case REGULAR_EXPRESSION -> {
                int pattern = compareBytes(utf8(a.asRegularExpression().getPattern()), utf8(b.asRegularExpression().getPattern()));
                yield pattern != 0 ? pattern : a.asRegularExpression().getOptions().compareTo(b.asRegularExpression().getOptions());
            }
            case JAVASCRIPT -> a.asJavaScript().getCode().compareTo(b.asJavaScript().getCode());
            case JAVASCRIPT_WITH_SCOPE -> a.asJavaScriptWithScope().getCode().compareTo(b.asJavaScriptWithScope().getCode());
            case DB_POINTER -> a.asDBPointer().getNamespace().compareTo(b.asDBPointer().getNamespace()) != 0
                    ? a.asDBPointer().getNamespace().compareTo(b.asDBPointer().getNamespace())
                    : a.asDBPointer().getId().compareTo(b.asDBPointer().getId());
            default -> throw new IllegalArgumentException("no BSON order for " + a.getBsonType());
        };
    }

    /** A hash consistent with {@link #compare}: values MongoDB treats as equal hash alike. */
    public static int hash(BsonValue value) {
        return switch (value.getBsonType()) {
            case MIN_KEY, MAX_KEY, NULL, UNDEFINED -> rank(value.getBsonType());
            case INT32, INT64, DOUBLE, DECIMAL128 -> numberHash(value);
            case STRING, SYMBOL -> text(value).hashCode();
            case DOCUMENT -> {
                int h = 1;
                for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                    h = 31 * (31 * h + e.getKey().hashCode()) + hash(e.getValue());
                }
                yield h;
            }
            case ARRAY -> {
                int h = 7;
                for (BsonValue element : value.asArray()) {
                    h = 31 * h + hash(element);
                }
                yield h;
            }
            default -> value.hashCode();
        };
    }

    /**
     * The types whose values sort above every value of {@code type}, for a {@code $type} query.
     * Arrays are left out: a sort key is never an array (an array sorts by its elements), and
     * deprecated types and code (symbol, DBPointer, JavaScript, undefined) are not queried.
     */
    public static List<BsonType> typesRankedAbove(BsonType type) {
        int rank = rank(type);
        return List.of(BsonType.STRING, BsonType.DOCUMENT, BsonType.BINARY, BsonType.OBJECT_ID, BsonType.BOOLEAN,
                        BsonType.DATE_TIME, BsonType.TIMESTAMP, BsonType.REGULAR_EXPRESSION, BsonType.MAX_KEY)
                .stream().filter(t -> rank(t) > rank).toList();
    }

    /** Canonical types as MongoDB ranks them; undefined sorts with null, symbol with string. */
    static int rank(BsonType type) {
        return switch (type) {
            case MIN_KEY -> 0;
            case NULL, UNDEFINED -> 1;
            case INT32, INT64, DOUBLE, DECIMAL128 -> 2;
            case STRING, SYMBOL -> 3;
            case DOCUMENT -> 4;
            case ARRAY -> 5;
            case BINARY -> 6;
            case OBJECT_ID -> 7;
            case BOOLEAN -> 8;
            case DATE_TIME -> 9;
            case TIMESTAMP -> 10;
            case REGULAR_EXPRESSION -> 11;
            case DB_POINTER -> 12;
            case JAVASCRIPT -> 13;
            case JAVASCRIPT_WITH_SCOPE -> 14;
            case MAX_KEY -> 15;
            default -> throw new IllegalArgumentException("no BSON order for " + type);
        };
    }

    private static int compareNumbers(BsonValue a, BsonValue b) {
        boolean aNaN = isNaN(a);
        boolean bNaN = isNaN(b);
        if (aNaN || bNaN) {
            return Boolean.compare(!aNaN, !bNaN);
        }
        int aInf = infinity(a);
        int bInf = infinity(b);
        if (aInf != 0 || bInf != 0) {
            return Integer.compare(aInf, bInf);
        }
        return exact(a).compareTo(exact(b));
    }

    private static int numberHash(BsonValue value) {
        if (isNaN(value)) {
            return 0x7ff8;
        }
        int inf = infinity(value);
        if (inf != 0) {
            return inf * 0x7ff0;
        }
        BigDecimal exact = exact(value);
        return exact.signum() == 0 ? 0 : exact.stripTrailingZeros().hashCode();
    }

    private static boolean isNaN(BsonValue v) {
        return (v.isDouble() && Double.isNaN(v.asDouble().getValue())) || (v.isDecimal128() && v.asDecimal128().getValue().isNaN());
    }

    /** -1 or 1 for an infinite double or decimal, 0 otherwise. */
    private static int infinity(BsonValue v) {
        if (v.isDouble() && Double.isInfinite(v.asDouble().getValue())) {
            return v.asDouble().getValue() > 0 ? 1 : -1;
        }
        if (v.isDecimal128() && v.asDecimal128().getValue().isInfinite()) {
            return v.asDecimal128().getValue().isNegative() ? -1 : 1;
        }
        return 0;
    }

    private static BigDecimal exact(BsonValue v) {
        return switch (v.getBsonType()) {
            case INT32 -> BigDecimal.valueOf(v.asInt32().getValue());
            case INT64 -> BigDecimal.valueOf(v.asInt64().getValue());
            case DOUBLE -> new BigDecimal(v.asDouble().getValue()); // exact binary value, as MongoDB compares
            case DECIMAL128 -> decimal(v.asDecimal128().getValue());
            default -> throw new IllegalArgumentException("not a number: " + v.getBsonType());
        };
    }

    private static BigDecimal decimal(Decimal128 d) {
        try {
            return d.bigDecimalValue();
        } catch (ArithmeticException negativeZero) {
            return BigDecimal.ZERO;
        }
    }

    private static String text(BsonValue v) {
        return v.isSymbol() ? v.asSymbol().getSymbol() : v.asString().getValue();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int compareBytes(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    private static int compareDocuments(Iterator<Map.Entry<String, BsonValue>> a, Iterator<Map.Entry<String, BsonValue>> b) {
        while (a.hasNext() && b.hasNext()) {
            Map.Entry<String, BsonValue> x = a.next();
            Map.Entry<String, BsonValue> y = b.next();
            int byType = Integer.compare(rank(x.getValue().getBsonType()), rank(y.getValue().getBsonType()));
            if (byType != 0) {
                return byType;
            }
            int byName = compareBytes(utf8(x.getKey()), utf8(y.getKey()));
            if (byName != 0) {
                return byName;
            }
            int byValue = compare(x.getValue(), y.getValue());
            if (byValue != 0) {
                return byValue;
            }
        }
        return Boolean.compare(a.hasNext(), b.hasNext());
    }

    private static int compareArrays(List<BsonValue> a, List<BsonValue> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = compare(a.get(i), b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }

    private static int compareBinary(BsonValue a, BsonValue b) {
        byte[] x = a.asBinary().getData();
        byte[] y = b.asBinary().getData();
        if (x.length != y.length) {
            return Integer.compare(x.length, y.length);
        }
        int bySubtype = Integer.compare(a.asBinary().getType() & 0xFF, b.asBinary().getType() & 0xFF);
        return bySubtype != 0 ? bySubtype : compareBytes(x, y);
    }
}
