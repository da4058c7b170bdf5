package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.bson.Document;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.ObjectDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The on-disk engine finds a document-valued key however the key object was built (decoded, read from disk, copied). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StableKeyOrderTest {
    @TempDir
    Path dir;

    /** The same key built two ways, as the engine builds them: entry by entry (decoded) and from a map (copied, read back). */
    private static KeyValue decoded() {
        Document id = new Document();
        id.put("ns", "demo.orders");
        id.put("id", 5.0);
        return new KeyValue(id);
    }

    private static KeyValue copied() {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("ns", "demo.orders");
        fields.put("id", 5.0);
        return new KeyValue(new Document(fields));
    }

    @Test
    void equalKeysBuiltDifferentlyCompareEqual() {
        assertThat(decoded()).isEqualTo(copied());
        assertThat(new ObjectDataType().compare(decoded(), copied()))
                .as("H2's own order (the defect)")
                .isNotZero();
        assertThat(new StableKeyOrder().compare(decoded(), copied())).isZero();
        assertThat(new StableKeyOrder().compare(copied(), decoded())).isZero();
    }

    private static BsonDocument key(int i) {
        return new BsonDocument("ns", new BsonString("demo.orders")).append("id", new BsonInt32(i));
    }

    private static long deleted(MemberStore store, BsonDocument filter) {
        BsonDocument reply = store.command(
                "d",
                new BsonDocument("delete", new BsonString("fences"))
                        .append(
                                "deletes",
                                new BsonArray(
                                        List.of(new BsonDocument("q", filter).append("limit", new BsonInt32(0))))));
        return reply.getNumber("n").longValue();
    }

    private static void insert(MemberStore store, BsonDocument document) {
        BsonDocument reply = store.command(
                "d",
                new BsonDocument("insert", new BsonString("fences"))
                        .append("documents", new BsonArray(List.of(document))));
        assertThat(reply.containsKey("writeErrors")).as(reply.toJson()).isFalse();
    }

    /** An upsert as a fence claim writes one: the engine builds the new document's _id by copying the filter's. */
    private static void upsert(MemberStore store, BsonDocument key) {
        BsonDocument reply = store.command(
                "d",
                new BsonDocument("update", new BsonString("fences"))
                        .append(
                                "updates",
                                new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", key))
                                        .append("upsert", BsonBoolean.TRUE)
                                        .append(
                                                "u",
                                                new BsonDocument("$set", new BsonDocument("claim", new BsonInt32(1)))
                                                        .append(
                                                                "$setOnInsert",
                                                                new BsonDocument("kind", new BsonString("CLAIM"))))))));
        assertThat(reply.getNumber("n").intValue()).as(reply.toJson()).isEqualTo(1);
    }

    /** Keys 0..n-1: the even ones inserted (decoded keys), the odd ones upserted (copied keys). */
    private static void insertAndUpsertAlternately(MemberStore store, int n) {
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0) {
                insert(store, new BsonDocument("_id", key(i)));
            } else {
                upsert(store, key(i));
            }
        }
    }

    /**
     * Documents whose {@code _id} keys were built two ways (inserted: decoded; upserted: copied) share one map;
     * after a restart every key is read back from disk, and each must still be found, refused again and deleted.
     */
    @Test
    void documentKeysInsertedAndUpsertedAreFoundDeletedAndKeptUniqueAfterARestart() {
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            insertAndUpsertAlternately(store, 60);
        }
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            for (int i = 0; i < 60; i++) {
                assertThat(store.findById("d", "fences", key(i)))
                        .as("a point read of key " + i)
                        .isPresent();
            }
            BsonDocument duplicate = store.command(
                    "d",
                    new BsonDocument("insert", new BsonString("fences"))
                            .append("documents", new BsonArray(List.of(new BsonDocument("_id", key(7))))));
            assertThat(duplicate.containsKey("writeErrors"))
                    .as("a second document with a stored _id: " + duplicate)
                    .isTrue();
            List<BsonValue> half = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                half.add(key(i));
            }
            assertThat(deleted(store, new BsonDocument("_id", new BsonDocument("$in", new BsonArray(half)))))
                    .isEqualTo(30);
            assertThat(store.find("d", "fences", new BsonDocument(), null, 0))
                    .as("left after deleting half")
                    .hasSize(30);
            assertThat(deleted(store, new BsonDocument())).isEqualTo(30);
            assertThat(store.find("d", "fences", new BsonDocument(), null, 0)).isEmpty();
        }
    }

    /** A store written by the engine's own order (before this fix) is put in order when opened, losing nothing. */
    @Test
    void aStoreWrittenInTheOldOrderIsReorderedWhenOpened() {
        MVStore old =
                new MVStore.Builder().fileName(dir.resolve("m.mv").toString()).open();
        H2Backend backend = new H2Backend(old);
        try (MemberStore writer = new MemberStore(backend)) {
            insertAndUpsertAlternately(writer, 200);
        }
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            assertThat(store.find("d", "fences", new BsonDocument(), null, 0)).hasSize(200);
            for (int i = 0; i < 200; i++) {
                assertThat(store.findById("d", "fences", key(i))).as("key " + i).isPresent();
            }
            assertThat(deleted(store, new BsonDocument())).isEqualTo(200);
            assertThat(store.find("d", "fences", new BsonDocument(), null, 0)).isEmpty();
        }
    }

    /**
     * The check walks every key of every map (minutes on a store of a few GB behind a slow disk, at every start): a
     * store is checked once, then marked, and later opens trust the mark; a mark of an older stable order is checked
     * again. Shown with a map out of order: reordered while unmarked or marked with an older version, left as it is
     * under the current mark (which is why a store marked by this version must not be written by one before it).
     */
    @Test
    void aStoreIsCheckedOnceThenTrustedUntilTheStableOrderChanges() {
        String file = dir.resolve("marked.mv").toString();
        try (MemberStore writer = new MemberStore(
                new H2Backend(new MVStore.Builder().fileName(file).open()))) {
            insertAndUpsertAlternately(writer, 200); // the engine's own order: out of the stable one
        }
        try (MVStore store = new MVStore.Builder().fileName(file).open()) {
            assertThat(OrderedH2Backend.checkedInStableOrder(store)).isFalse();
            OrderedH2Backend.withOrderedMaps(store);
            assertThat(OrderedH2Backend.checkedInStableOrder(store))
                    .as("marked once checked")
                    .isTrue();
            assertThat(storedInStableOrder(store)).as("reordered").isTrue();
        }
        // a map out of order again, under the current mark: trusted, not walked
        try (MVStore store = new MVStore.Builder().fileName(file).open()) {
            outOfOrder(store);
            store.commit();
        }
        try (MVStore store = new MVStore.Builder().fileName(file).open()) {
            OrderedH2Backend.withOrderedMaps(store);
            assertThat(storedInStableOrder(store))
                    .as("not walked under the current mark")
                    .isFalse();
            store.<String, Object>openMap(OrderedH2Backend.KEY_ORDER)
                    .put("version", OrderedH2Backend.STABLE_ORDER_VERSION - 1);
            store.commit();
        }
        // an older mark: checked and reordered again
        try (MVStore store = new MVStore.Builder().fileName(file).open()) {
            OrderedH2Backend.withOrderedMaps(store);
            assertThat(storedInStableOrder(store))
                    .as("reordered under an older mark")
                    .isTrue();
            assertThat(OrderedH2Backend.checkedInStableOrder(store)).isTrue();
        }
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "marked")) {
            for (int i = 0; i < 200; i++) {
                assertThat(store.findById("d", "fences", key(i))).as("key " + i).isPresent();
            }
        }
    }

    private static final String FENCES = "databases.d.fences";

    /** Writes the fences map's entries again in the reverse of the stable order (a tree no lookup can search). */
    private static void outOfOrder(MVStore store) {
        MVMap<Object, Object> ordered = OrderedH2Backend.open(store, FENCES);
        Map<Object, Object> entries = new LinkedHashMap<>();
        ordered.forEach(entries::put);
        store.removeMap(ordered);
        MVMap<Object, Object> reversed =
                store.openMap(FENCES, new MVMap.Builder<Object, Object>().keyType(new ObjectDataType() {
                            @Override
                            public int compare(Object a, Object b) {
                                return new StableKeyOrder().compare(b, a);
                            }
                        }));
        entries.forEach(reversed::put);
    }

    /** Whether the fences map's keys come in the stable order. */
    private static boolean storedInStableOrder(MVStore store) {
        StableKeyOrder order = new StableKeyOrder();
        Object previous = null;
        for (java.util.Iterator<Object> keys =
                        OrderedH2Backend.open(store, FENCES).keyIterator(null);
                keys.hasNext(); ) {
            Object key = keys.next();
            if (previous != null && order.compare(previous, key) >= 0) {
                return false;
            }
            previous = key;
        }
        return true;
    }

    /** A crash between removing a map and renaming its rebuilt copy leaves only the copy: it becomes the map, never dropped. */
    @Test
    void aRebuildInterruptedAfterItsCopyWasCompleteKeepsEveryEntry() {
        String map = "databases.d.fences";
        try (MVStore store = new MVStore.Builder()
                .fileName(dir.resolve("crash.mv").toString())
                .open()) {
            MVMap<Object, Object> copy = OrderedH2Backend.open(store, map + OrderedH2Backend.REORDERING);
            for (int i = 0; i < 10; i++) {
                copy.put(i, "entry " + i);
            }
            store.commit();
        }
        try (MVStore store = new MVStore.Builder()
                .fileName(dir.resolve("crash.mv").toString())
                .open()) {
            OrderedH2Backend.withOrderedMaps(store);
            assertThat(store.hasMap(map + OrderedH2Backend.REORDERING)).isFalse();
            assertThat(OrderedH2Backend.open(store, map).size())
                    .as("entries kept")
                    .isEqualTo(10);
        }
    }

    /**
     * Version 2 compares values, not serialized forms: for keys of every shape the engine stores (documents, index key
     * tuples, lists, mixed with strings, numbers, object ids and nulls), it is a total order (antisymmetric and
     * transitive), and two keys compare equal exactly when their canonical serialized forms are equal, so the keys
     * that were one key in version 1 are one key now.
     */
    @Test
    void valuesCompareInATotalOrderWhoseEqualKeysAreTheSerializedFormsEqualKeys() {
        java.util.Random random = new java.util.Random(20261207);
        List<Object> keys = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            keys.add(randomKey(random, 0));
        }
        keys.add(decoded());
        keys.add(copied());
        keys.add(new KeyValue(new de.bwaldvogel.mongo.bson.ObjectId(), 1L));
        keys.add(new KeyValue(new de.bwaldvogel.mongo.bson.ObjectId(), 1L));
        StableKeyOrder order = new StableKeyOrder();
        // each key's serialized form once, and a failure message only for a failing pair: an assertion per pair that
        // rendered both keys for its description took 13 s at load 40 and ran over the 60 s timeout at load 85
        List<byte[]> serialized = new ArrayList<>();
        for (Object key : keys) {
            serialized.add(ObjectDataType.serialize(StableKeyOrder.canonical(key)));
        }
        int equalPairs = 0;
        for (int i = 0; i < keys.size(); i++) {
            for (int j = 0; j < keys.size(); j++) {
                Object a = keys.get(i);
                Object b = keys.get(j);
                int ab = Integer.signum(order.compare(a, b));
                if (Integer.signum(order.compare(b, a)) != -ab) {
                    fail(a + " against " + b + ": not antisymmetric");
                }
                boolean sameSerialized = java.util.Arrays.equals(serialized.get(i), serialized.get(j));
                if ((ab == 0) != sameSerialized) {
                    fail(a + " equal to " + b + ": " + (ab == 0) + ", their serialized forms equal: " + sameSerialized);
                }
                if (ab == 0 && a != b) {
                    equalPairs++;
                }
            }
        }
        assertThat(equalPairs)
                .as("distinct objects holding one key were compared")
                .isPositive();
        List<Object> sorted = new ArrayList<>(keys);
        sorted.sort(order::compare);
        for (int i = 0; i < sorted.size(); i++) {
            for (int j = i + 1; j < sorted.size(); j++) {
                if (order.compare(sorted.get(i), sorted.get(j)) > 0) {
                    fail("transitive: " + sorted.get(i) + " before " + sorted.get(j));
                }
            }
        }
    }

    /** Version 1's order: the canonical copies' serialized forms, compared as H2 compares a type it does not know. */
    private static final class SerializedOrder extends ObjectDataType {
        @Override
        public int compare(Object a, Object b) {
            boolean structuredA = a instanceof Document || a instanceof KeyValue;
            boolean structuredB = b instanceof Document || b instanceof KeyValue;
            if (structuredA && structuredB) {
                return ObjectDataType.compareNotNull(
                        ObjectDataType.serialize(StableKeyOrder.canonical(a)),
                        ObjectDataType.serialize(StableKeyOrder.canonical(b)));
            }
            return new ObjectDataType().compare(StableKeyOrder.canonical(a), StableKeyOrder.canonical(b));
        }
    }

    /**
     * A store written and marked in version 1's order (the serialized forms) is rebuilt in version 2's when opened:
     * every document found by its {@code _id}, every key still unique, nothing lost.
     */
    @Test
    void aStoreMarkedInTheSerializedOrderOfVersionOneIsRebuiltAndLosesNothing() {
        String file = dir.resolve("v1.mv").toString();
        try (MVStore store = new MVStore.Builder().fileName(file).open()) {
            MVMap<Object, Object> fences =
                    store.openMap(FENCES, new MVMap.Builder<Object, Object>().keyType(new SerializedOrder()));
            for (int i = 0; i < 300; i++) {
                Document id = new Document();
                id.put("ns", "demo.orders");
                id.put("id", i % 2 == 0 ? (Object) i : "k" + i);
                fences.put(id, "fence " + i);
            }
            store.<String, Object>openMap(OrderedH2Backend.KEY_ORDER).put("version", 1);
            store.commit();
        }
        try (MVStore store = new MVStore.Builder().fileName(file).open()) {
            assertThat(storedInStableOrder(store))
                    .as("version 1's order is not version 2's")
                    .isFalse();
            OrderedH2Backend.withOrderedMaps(store);
            assertThat(storedInStableOrder(store)).as("rebuilt").isTrue();
            MVMap<Object, Object> fences = OrderedH2Backend.open(store, FENCES);
            assertThat(fences.size()).isEqualTo(300);
            for (int i = 0; i < 300; i++) {
                Map<String, Object> fields = new LinkedHashMap<>();
                fields.put("ns", "demo.orders");
                fields.put("id", i % 2 == 0 ? (Object) i : "k" + i);
                assertThat(fences.get(new Document(fields))).as("key " + i).isEqualTo("fence " + i);
            }
        }
    }

    private static Object randomKey(java.util.Random random, int depth) {
        return switch (random.nextInt(depth < 2 ? 7 : 4)) {
            case 0 -> random.nextInt(50);
            case 1 -> "k" + random.nextInt(50);
            case 2 -> random.nextInt(50) / 2.0;
            case 3 ->
                random.nextBoolean()
                        ? null
                        : new org.bson.types.ObjectId(new java.util.Date(1_700_000_000_000L), random.nextInt(1 << 20));
            case 4 -> {
                Document d = new Document();
                for (int f = random.nextInt(3); f >= 0; f--) {
                    d.put("f" + random.nextInt(4), randomKey(random, depth + 1));
                }
                yield d;
            }
            case 5 -> new KeyValue(randomKey(random, depth + 1), randomKey(random, depth + 1));
            default -> {
                List<Object> list = new ArrayList<>();
                for (int e = random.nextInt(3); e >= 0; e--) {
                    list.add(randomKey(random, depth + 1));
                }
                yield new KeyValue(new Document("a", list));
            }
        };
    }
}
