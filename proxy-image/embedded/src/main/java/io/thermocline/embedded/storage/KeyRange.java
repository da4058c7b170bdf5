package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Decimal128;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import io.thermocline.embedded.storage.IndexKeyOrder.Seek;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Where in BSON order a filter lets one field's value be, for a document the filter matches whose field holds no array:
 * from {@code low} to {@code high} (null: no bound). Taken from the filter's top-level conditions on the field, those
 * of its top-level {@code $and} conjuncts (the tightest), and of a top-level {@code $or} whose every branch bounds the
 * field (the hull of the branches). Comparisons keep to their type, as the engine's matcher does (type bracketing:
 * {@code $gte} a date bounds from the date to the last date); every other condition leaves the field unbounded. A walk
 * of an index on the field needs to read only this range, and still matches the whole filter on each document.
 */
record KeyRange(Seek low, Seek high) {

    static final KeyRange ALL = new KeyRange(null, null);

    /** The range of {@code field}'s value in documents matching {@code filter} (the engine's document model). */
    static KeyRange of(Document filter, String field) {
        KeyRange range = ALL;
        for (Map.Entry<String, Object> condition : filter.entrySet()) {
            String key = condition.getKey();
            Object value = condition.getValue();
            if (key.equals("$and") && value instanceof List<?> conjuncts) {
                for (Object conjunct : conjuncts) {
                    if (conjunct instanceof Document d) {
                        range = range.intersect(of(d, field));
                    }
                }
            } else if (key.equals("$or") && value instanceof List<?> branches && !branches.isEmpty()) {
                KeyRange hull = null;
                for (Object branch : branches) {
                    KeyRange each = branch instanceof Document d ? of(d, field) : ALL;
                    hull = hull == null ? each : hull.hull(each);
                }
                range = range.intersect(hull);
            } else if (key.equals(field)) {
                range = range.intersect(ofCondition(value));
            }
        }
        return range;
    }

    /** The range one condition on the field allows: a value (equality), or a document of operators. */
    static KeyRange ofCondition(Object condition) {
        if (!(condition instanceof Document operators)
                || operators.keySet().stream().noneMatch(k -> k.startsWith("$"))) {
            return point(condition);
        }
        KeyRange range = ALL;
        for (Map.Entry<String, Object> operator : operators.entrySet()) {
            Object operand = operator.getValue();
            KeyRange each = switch (operator.getKey()) {
                case "$eq" -> point(operand);
                case "$in" -> in(operand);
                case "$gt" ->
                    comparable(operand)
                            ? new KeyRange(Seek.after(operand), Seek.afterType(IndexKeyOrder.rank(operand)))
                            : ALL;
                case "$gte" ->
                    comparable(operand)
                            ? new KeyRange(Seek.before(operand), Seek.afterType(IndexKeyOrder.rank(operand)))
                            : ALL;
                case "$lt" ->
                    comparable(operand)
                            ? new KeyRange(Seek.beforeType(IndexKeyOrder.rank(operand)), Seek.before(operand))
                            : ALL;
                case "$lte" ->
                    comparable(operand)
                            ? new KeyRange(Seek.beforeType(IndexKeyOrder.rank(operand)), Seek.after(operand))
                            : ALL;
                default -> ALL; // $ne, $nin, $exists, $type, $not, $regex, ...: no bound
            };
            range = range.intersect(each);
        }
        return range;
    }

    private static KeyRange in(Object operand) {
        if (!(operand instanceof Collection<?> values) || values.isEmpty()) {
            return ALL;
        }
        KeyRange hull = null;
        for (Object value : values) {
            KeyRange each = point(value);
            hull = hull == null ? each : hull.hull(each);
        }
        return hull;
    }

    private static KeyRange point(Object value) {
        return scalar(value) || Missing.isNullOrMissing(value)
                ? new KeyRange(Seek.before(value), Seek.after(value))
                : ALL;
    }

    /**
     * Values whose equality and comparisons the matcher decides as BSON order does, within one type: numbers (not
     * Decimal128, which the engine compares with other numbers by a double), strings, dates, ObjectIds, booleans,
     * timestamps. Null is equality only (a comparison with null matches nothing).
     */
    private static boolean scalar(Object value) {
        return (value instanceof Number && !(value instanceof Decimal128))
                || value instanceof String
                || value instanceof Instant
                || value instanceof ObjectId
                || value instanceof Boolean
                || value instanceof BsonTimestamp;
    }

    private static boolean comparable(Object value) {
        return scalar(value);
    }

    /** No value lies between the bounds (a bound is a position beside a value, never a value: equal bounds hold none). */
    boolean empty() {
        return low != null && high != null && IndexKeyOrder.inValueOrder(low, high) >= 0;
    }

    KeyRange intersect(KeyRange other) {
        return new KeyRange(later(low, other.low, true), later(high, other.high, false));
    }

    KeyRange hull(KeyRange other) {
        return new KeyRange(
                low == null || other.low == null ? null : later(low, other.low, false),
                high == null || other.high == null ? null : later(high, other.high, true));
    }

    /** Of two bounds (null: none), the later one in BSON order, or the earlier; a missing bound yields to the other. */
    private static Seek later(Seek a, Seek b, boolean later) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        int c = IndexKeyOrder.inValueOrder(a, b);
        return (later ? c >= 0 : c <= 0) ? a : b;
    }
}
