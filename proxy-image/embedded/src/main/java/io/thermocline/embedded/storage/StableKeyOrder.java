package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.h2.mvstore.type.ObjectDataType;

/**
 * The key order of the on-disk engine's maps, made a function of the key's value alone.
 *
 * <p>H2 orders keys it has no type for (a document {@code _id}, every index's {@code KeyValue}) by their Java
 * serialization, and a {@code HashMap}'s serialized form records its table size, which depends on how the map
 * was built: a key decoded from a request, the same key read back from a page on disk and one built by
 * {@code new Document(map)} serialize differently. One B-tree then holds keys in two orders, and a lookup by
 * a fresh key misses a stored one: the unique {@code _id} index did not find documents the delete had just
 * matched, so they stayed (the fences a claim inserts and removes in one transaction were committed).
 * Comparing canonical copies (each document rebuilt entry by entry, each list an {@code ArrayList}) gives
 * every key one serialized form, the one a freshly decoded key has, so stores written before keep their order
 * wherever it was consistent ({@link OrderedH2Backend} repairs the maps where it was not).
 */
final class StableKeyOrder extends ObjectDataType {

    /**
     * H2's comparison caches the last type it met in the data type object, unsynchronized: two threads comparing
     * keys of different types through one object can see each other's cache and fail ("Can not compare"). Each
     * thread compares through its own.
     */
    private static final ThreadLocal<ObjectDataType> COMPARING = ThreadLocal.withInitial(ObjectDataType::new);

    /** One per map, as H2 gives each map its own data type (reads and writes keep a per-object cache too). */
    StableKeyOrder() {}

    /**
     * The key this thread last compared first, and its serialized canonical form: a B-tree search compares its one
     * key with a dozen or more stored ones, and serializing it each time was most of a lookup's cost on disk.
     */
    private static final ThreadLocal<Probe> PROBE = ThreadLocal.withInitial(Probe::new);

    private static final class Probe {
        Object key;
        byte[] serialized;

        byte[] of(Object candidate) {
            if (candidate != key) {
                serialized = ObjectDataType.serialize(canonical(candidate));
                key = candidate;
            }
            return serialized;
        }
    }

    @Override
    public int compare(Object a, Object b) {
        if (bySerialization(a) && bySerialization(b)) {
            // what H2 does for two keys of a type it does not know (neither Comparable): their serialized forms'
            // byte order, here with the first key's form kept while the search goes on
            return a == b
                    ? 0
                    : ObjectDataType.compareNotNull(PROBE.get().of(a), ObjectDataType.serialize(canonical(b)));
        }
        return COMPARING.get().compare(canonical(a), canonical(b));
    }

    /** Keys H2 orders by their serialized form: documents and index key tuples (neither is Comparable). */
    private static boolean bySerialization(Object key) {
        return key instanceof Document || key instanceof KeyValue;
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
