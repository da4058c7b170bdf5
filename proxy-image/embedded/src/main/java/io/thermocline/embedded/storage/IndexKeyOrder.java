package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.BinData;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.LegacyUUID;
import de.bwaldvogel.mongo.bson.MaxKey;
import de.bwaldvogel.mongo.bson.MinKey;
import de.bwaldvogel.mongo.bson.ObjectId;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import org.h2.mvstore.type.ObjectDataType;

/**
 * The order of a {@link SecondaryIndex}'s entries, {@code (key values..., _id)}: each key value in BSON comparison
 * order (the engine's own {@link ValueComparator}, which its sort uses) in the direction the index names, then the
 * {@code _id} ascending; entries BSON order calls equal (1 and 1.0) are kept apart by {@link StableKeyOrder}, so one
 * document's entry is found and removed exactly. Walking the index forwards is the sort on its keys (then {@code _id}
 * ascending); backwards, the opposite sort.
 *
 * <p>A search key may hold a {@link Seek} as its first element: a position just before or after a value, or before or
 * after every value of a BSON type, which no stored entry equals.
 */
final class IndexKeyOrder extends ObjectDataType implements java.util.Comparator<Object> {

    private static final ValueComparator BSON = ValueComparator.ascWithoutListHandling();

    /** One per key: true where the index orders that key descending. */
    private final boolean[] descending;

    private final StableKeyOrder exact = new StableKeyOrder();

    IndexKeyOrder(List<Boolean> ascending) {
        descending = new boolean[ascending.size()];
        for (int i = 0; i < descending.length; i++) {
            descending[i] = !ascending.get(i);
        }
    }

    @Override
    public int compare(Object a, Object b) {
        if (a == b) {
            return 0;
        }
        KeyValue x = (KeyValue) a;
        KeyValue y = (KeyValue) b;
        int n = Math.min(x.size(), y.size());
        for (int i = 0; i < n; i++) {
            int c = inValueOrder(x.get(i), y.get(i));
            if (c != 0) {
                return i < descending.length && descending[i] ? -c : c;
            }
        }
        if (x.size() != y.size() || x.get(0) instanceof Seek) {
            return Integer.compare(x.size(), y.size()); // a search key of one Seek is compared with another: equal
        }
        return exact.compare(a, b);
    }

    /** Two key values, either of them possibly a {@link Seek}, in BSON comparison order. */
    static int inValueOrder(Object a, Object b) {
        if (!(a instanceof Seek) && !(b instanceof Seek)) {
            return BSON.compare(a, b);
        }
        Seek x = Seek.of(a);
        Seek y = Seek.of(b);
        int c = Integer.compare(x.rank, y.rank);
        if (c == 0) {
            c = Integer.compare(x.tier, y.tier);
        }
        if (c == 0 && x.tier == VALUE) {
            c = BSON.compare(x.value, y.value);
            if (c == 0) {
                c = Integer.compare(x.side, y.side);
            }
        }
        return c;
    }

    private static final int TYPE_START = 0;
    private static final int VALUE = 1;
    private static final int TYPE_END = 2;

    /**
     * A position in BSON order: just before or after a value ({@code side} -1 or 1; 0 is the value itself), or before
     * or after every value of the type ranked {@code rank} ({@link #rank}). A seek compares equal to no value.
     */
    record Seek(int rank, int tier, Object value, int side) {

        static Seek before(Object value) {
            return new Seek(IndexKeyOrder.rank(value), VALUE, value, -1);
        }

        static Seek after(Object value) {
            return new Seek(IndexKeyOrder.rank(value), VALUE, value, 1);
        }

        static Seek beforeType(int rank) {
            return new Seek(rank, TYPE_START, null, 0);
        }

        static Seek afterType(int rank) {
            return new Seek(rank, TYPE_END, null, 0);
        }

        private static Seek of(Object valueOrSeek) {
            return valueOrSeek instanceof Seek s ? s : new Seek(IndexKeyOrder.rank(valueOrSeek), VALUE, valueOrSeek, 0);
        }
    }

    static final int NULL_RANK = 1;

    /**
     * A value's place among BSON types, as {@link ValueComparator} ranks them (MongoDB's comparison order): MinKey,
     * null and missing, numbers, strings, documents, arrays, binary data, UUIDs, ObjectIds, booleans, dates,
     * timestamps, regular expressions, MaxKey.
     */
    static int rank(Object value) {
        if (value instanceof MinKey) {
            return 0;
        }
        if (Missing.isNullOrMissing(value)) {
            return NULL_RANK;
        }
        if (value instanceof Number) {
            return 2;
        }
        if (value instanceof String) {
            return 3;
        }
        if (value instanceof Document) {
            return 4;
        }
        if (value instanceof List<?> || value instanceof Collection<?>) {
            return 5;
        }
        if (value instanceof BinData) {
            return 6;
        }
        if (value instanceof LegacyUUID) {
            return 7;
        }
        if (value instanceof UUID) {
            return 8;
        }
        if (value instanceof ObjectId) {
            return 9;
        }
        if (value instanceof Boolean) {
            return 10;
        }
        if (value instanceof Instant) {
            return 11;
        }
        if (value instanceof BsonTimestamp) {
            return 12;
        }
        if (value instanceof BsonRegularExpression) {
            return 13;
        }
        if (value instanceof MaxKey) {
            return 14;
        }
        throw new IllegalArgumentException("no BSON order for " + value.getClass());
    }
}
