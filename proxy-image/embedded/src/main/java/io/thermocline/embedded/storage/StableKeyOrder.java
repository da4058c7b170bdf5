package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.h2.mvstore.type.ObjectDataType;

/**
 * The key order of the on-disk engine's maps, made a function of the key's value alone, and cheap.
 *
 * <p>H2 orders keys it has no type for (a document {@code _id}, every index's {@code KeyValue}) by their Java
 * serialization, and a {@code HashMap}'s serialized form records its table size, which depends on how the map
 * was built: a key decoded from a request, the same key read back from a page on disk and one built by
 * {@code new Document(map)} serialize differently. One B-tree then holds keys in two orders, and a lookup by
 * a fresh key misses a stored one: the unique {@code _id} index did not find documents the delete had just
 * matched, so they stayed (the fences a claim inserts and removes in one transaction were committed).
 *
 * <p>Version 1 of this order compared serialized canonical copies; serializing every stored key a search meets
 * was most of a write's cost on disk (an {@code updateMany} of the demo's 20,000 orders: 37 % of the fast tier's
 * and 54 % of the archive's CPU). Version 2 compares the values themselves: documents entry by entry (name, then
 * value), lists and index tuples element by element, leaves of one class by their natural order where it agrees
 * with {@code equals}, values of different kinds by the kind's name. Two keys compare equal exactly when their
 * canonical serialized forms are equal, as before, so the same keys are one key; only the order of distinct keys
 * changed, and {@link OrderedH2Backend} rebuilds a store written in version 1's order when it opens it.
 */
final class StableKeyOrder extends ObjectDataType {

    /**
     * H2's comparison caches the last type it met in the data type object, unsynchronized: two threads comparing
     * keys of different types through one object can see each other's cache and fail ("Can not compare"). Each
     * thread compares through its own.
     */
    private static final ThreadLocal<ObjectDataType> COMPARING = ThreadLocal.withInitial(ObjectDataType::new);

    /** Leaf classes whose {@code compareTo} is zero exactly when {@code equals} holds (not BigDecimal, Decimal128). */
    private static final Set<Class<?>> NATURALLY_ORDERED = Set.of(
            String.class,
            Integer.class,
            Long.class,
            Double.class,
            Float.class,
            Short.class,
            Byte.class,
            Character.class,
            Boolean.class,
            Date.class,
            Instant.class,
            UUID.class,
            de.bwaldvogel.mongo.bson.ObjectId.class,
            de.bwaldvogel.mongo.bson.BsonTimestamp.class,
            org.bson.types.ObjectId.class);

    /** One per map, as H2 gives each map its own data type (reads and writes keep a per-object cache too). */
    StableKeyOrder() {}

    @Override
    public int compare(Object a, Object b) {
        boolean structuredA = structured(a);
        boolean structuredB = structured(b);
        if (structuredA && structuredB) {
            return a == b ? 0 : compareValues(a, b);
        }
        if (structuredA || structuredB) {
            // H2 orders keys of a type it does not know after every type it does: keep that between the two groups
            return structuredA ? 1 : -1;
        }
        return COMPARING.get().compare(a, b);
    }

    /** Keys H2 cannot order itself: documents and index key tuples (neither is Comparable). */
    private static boolean structured(Object key) {
        return key instanceof Document || key instanceof KeyValue;
    }

    private static int compareValues(Object a, Object b) {
        if (a == b) {
            return 0;
        }
        String kindA = kind(a);
        String kindB = kind(b);
        if (!kindA.equals(kindB)) {
            return kindA.compareTo(kindB);
        }
        if (a instanceof Document x && b instanceof Document y) {
            return compareDocuments(x, y);
        }
        if (a instanceof Iterable<?> x && b instanceof Iterable<?> y) { // lists and index tuples
            return compareSequences(x.iterator(), y.iterator());
        }
        if (NATURALLY_ORDERED.contains(a.getClass())) {
            @SuppressWarnings("unchecked")
            Comparable<Object> natural = (Comparable<Object>) a;
            return natural.compareTo(b);
        }
        // anything else (binary data, regular expressions, min/max keys, ...) as H2 orders a type it does not know
        return ObjectDataType.compareNotNull(
                ObjectDataType.serialize(canonical(a)), ObjectDataType.serialize(canonical(b)));
    }

    /** What decides whether two values may be equal: documents, lists and tuples are one kind however built. */
    private static String kind(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof Document) {
            return "document";
        }
        if (value instanceof KeyValue) {
            return "key";
        }
        if (value instanceof List<?>) {
            return "list";
        }
        return value.getClass().getName();
    }

    private static int compareDocuments(Document a, Document b) {
        Iterator<Map.Entry<String, Object>> x = a.entrySet().iterator();
        Iterator<Map.Entry<String, Object>> y = b.entrySet().iterator();
        while (x.hasNext() && y.hasNext()) {
            Map.Entry<String, Object> left = x.next();
            Map.Entry<String, Object> right = y.next();
            int byName = left.getKey().compareTo(right.getKey());
            if (byName != 0) {
                return byName;
            }
            int byValue = compareValues(left.getValue(), right.getValue());
            if (byValue != 0) {
                return byValue;
            }
        }
        return Boolean.compare(x.hasNext(), y.hasNext());
    }

    private static int compareSequences(Iterator<?> x, Iterator<?> y) {
        while (x.hasNext() && y.hasNext()) {
            int byElement = compareValues(x.next(), y.next());
            if (byElement != 0) {
                return byElement;
            }
        }
        return Boolean.compare(x.hasNext(), y.hasNext());
    }

    static Object canonical(Object value) {
        if (value instanceof Document document) {
            Document copy = new Document();
            for (Map.Entry<String, Object> entry : document.entrySet()) {
                copy.put(entry.getKey(), canonical(entry.getValue()));
            }
            return copy;
        }
        if (value instanceof KeyValue key) {
            return new KeyValue(canonicalList(key));
        }
        if (value instanceof List<?> list) {
            return canonicalList(list);
        }
        return value;
    }

    private static List<Object> canonicalList(Iterable<?> values) {
        List<Object> copy = new ArrayList<>();
        for (Object value : values) {
            copy.add(canonical(value));
        }
        return copy;
    }
}
