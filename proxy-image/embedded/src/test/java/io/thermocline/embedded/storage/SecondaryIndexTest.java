package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.ValueComparator;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.Member;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A non-unique index (createIndex without {@code unique}) is built and kept by both engines: after any mix of inserts,
 * updates and deletes its entries are exactly those of the documents stored, in BSON order; it survives a restart and
 * is built again at open when its map is missing or its build was interrupted; listIndexes and dropIndexes behave as
 * before; and every member of a replica set keeps it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SecondaryIndexTest {

    @TempDir
    Path dir;

    private MemberStore open(String engine) {
        return MemberStore.open(engine.equals("disk") ? Storage.directory(dir) : Storage.memory(), "m");
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void theIndexHoldsExactlyTheStoredDocumentsThroughInsertsUpdatesAndDeletes(String engine) {
        try (MemberStore store = open(engine)) {
            Random random = new Random(39);
            insert(store, randomDocuments(random, 0, 150));
            // built from the documents already there, then kept by every write
            ok(store.command("d", createIndex("orders", new BsonDocument("k", new BsonInt32(1)), "k_1")));
            insert(store, randomDocuments(random, 150, 300));
            for (int i = 0; i < 400; i++) {
                int id = random.nextInt(300);
                BsonDocument byId = new BsonDocument("_id", new BsonInt32(id));
                switch (random.nextInt(5)) {
                    case 0 ->
                        store.command(
                                "d", update(byId, new BsonDocument("$set", new BsonDocument("k", value(random)))));
                    case 1 ->
                        store.command(
                                "d",
                                update(byId, new BsonDocument("$unset", new BsonDocument("k", new BsonString("")))));
                    case 2 ->
                        store.command(
                                "d",
                                update(byId, new BsonDocument("other", new BsonInt32(i)).append("k", value(random))));
                    case 3 ->
                        store.command(
                                "d",
                                update(byId, new BsonDocument("$set", new BsonDocument("other", new BsonInt32(i)))));
                    default ->
                        store.command(
                                "d",
                                new BsonDocument("delete", new BsonString("orders"))
                                        .append(
                                                "deletes",
                                                new BsonArray(List.of(new BsonDocument("q", byId)
                                                        .append("limit", new BsonInt32(1))))));
                }
            }
            store.command(
                    "d",
                    new BsonDocument("update", new BsonString("orders"))
                            .append(
                                    "updates",
                                    new BsonArray(List.of(new BsonDocument(
                                                    "q",
                                                    new BsonDocument(
                                                            "k", new BsonDocument("$type", new BsonString("string"))))
                                            .append(
                                                    "u",
                                                    new BsonDocument("$set", new BsonDocument("k", new BsonInt32(7))))
                                            .append("multi", BsonBoolean.TRUE)))));
            assertEntriesAreTheDocuments(store, "d", "orders", "k_1");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void listIndexesAndDropIndexesBehaveAsBefore(String engine) {
        try (MemberStore store = open(engine)) {
            insert(store, randomDocuments(new Random(1), 0, 20));
            BsonDocument created =
                    store.command("d", createIndex("orders", new BsonDocument("k", new BsonInt32(-1)), "k_-1"));
            ok(created);
            assertThat(created.getNumber("numIndexesAfter").intValue()).isEqualTo(2);
            ok(store.command("d", createIndex("orders", new BsonDocument("k", new BsonInt32(-1)), "k_-1")));
            List<BsonDocument> indexes = store.indexes("d", "orders");
            // in the order the engine keeps its index descriptions (on disk: by a random key), as before
            assertThat(indexes)
                    .extracting(i -> i.getString("name").getValue())
                    .containsExactlyInAnyOrder("_id_", "k_-1");
            BsonDocument k = indexes.stream()
                    .filter(i -> i.getString("name").getValue().equals("k_-1"))
                    .findFirst()
                    .orElseThrow();
            assertThat(k.getDocument("key")).isEqualTo(new BsonDocument("k", new BsonInt32(-1)));
            assertThat(k.getBoolean("unique", BsonBoolean.FALSE).getValue()).isFalse();
            assertThat(secondary(store, "d", "orders", "k_-1").getCount()).isEqualTo(20);

            BsonDocument missing = store.command(
                    "d",
                    new BsonDocument("dropIndexes", new BsonString("orders")).append("index", new BsonString("nope")));
            assertThat(missing.getNumber("ok").intValue()).isZero();
            assertThat(missing.getNumber("code").intValue())
                    .as(missing.toJson())
                    .isEqualTo(27); // IndexNotFound
            ok(store.command(
                    "d",
                    new BsonDocument("dropIndexes", new BsonString("orders")).append("index", new BsonString("k_-1"))));
            assertThat(store.indexes("d", "orders"))
                    .extracting(i -> i.getString("name").getValue())
                    .containsExactly("_id_");
            assertThat(store.collection("d", "orders").orElseThrow().getIndexes())
                    .noneMatch(i -> i instanceof SecondaryIndex<?>);
            // writes after the drop touch no index of that name
            insert(store, randomDocuments(new Random(2), 20, 30));
            assertThat(store.find("d", "orders", new BsonDocument(), null, 0)).hasSize(30);
        }
        if (engine.equals("disk")) {
            MVStore raw = new MVStore.Builder()
                    .fileName(dir.resolve("m.mv").toString())
                    .open();
            try {
                assertThat(raw.getMapNames()).noneMatch(n -> n.contains(OrderedH2Backend.SECONDARY_INDEX));
            } finally {
                raw.close();
            }
        }
    }

    @Test
    void onDiskTheIndexSurvivesARestartAndIsBuiltAgainWhenMissingOrHalfBuilt() {
        try (MemberStore store = open("disk")) {
            insert(store, randomDocuments(new Random(3), 0, 200));
            ok(store.command(
                    "d",
                    createIndex(
                            "orders", new BsonDocument("k", new BsonInt32(1)).append("n", new BsonInt32(-1)), "k_n")));
        }
        try (MemberStore store = open("disk")) {
            assertEntriesAreTheDocuments(store, "d", "orders", "k_n");
            insert(store, randomDocuments(new Random(4), 200, 210));
            assertEntriesAreTheDocuments(store, "d", "orders", "k_n");
        }
        // a store written before the index was built (its map missing), and one whose build a crash interrupted
        String mapName = "d.orders" + OrderedH2Backend.SECONDARY_INDEX + "k_n";
        MVStore raw =
                new MVStore.Builder().fileName(dir.resolve("m.mv").toString()).open();
        raw.removeMap(mapName);
        raw.close();
        try (MemberStore store = open("disk")) {
            assertEntriesAreTheDocuments(store, "d", "orders", "k_n");
            assertThat(secondary(store, "d", "orders", "k_n").getCount()).isEqualTo(210);
        }
        raw = new MVStore.Builder().fileName(dir.resolve("m.mv").toString()).open();
        MVMap<Object, Object> entries = raw.openMap(mapName);
        int id = entries.getId();
        List<Object> half = new ArrayList<>();
        Iterator<Object> keys = entries.keyIterator(null);
        for (int i = 0; i < 105 && keys.hasNext(); i++) {
            half.add(keys.next());
        }
        half.forEach(entries::remove);
        raw.openMap(H2IndexEntries.STATES).remove(id);
        raw.close();
        try (MemberStore store = open("disk")) {
            assertThat(secondary(store, "d", "orders", "k_n").getCount()).isEqualTo(210);
            assertEntriesAreTheDocuments(store, "d", "orders", "k_n");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void arraysMakeAMultikeyIndexAndParallelArraysAreRefused(String engine) {
        try (MemberStore store = open(engine)) {
            ok(store.command(
                    "d",
                    createIndex(
                            "orders", new BsonDocument("a", new BsonInt32(1)).append("b", new BsonInt32(1)), "a_b")));
            insert(
                    store,
                    List.of(new BsonDocument("_id", new BsonInt32(1))
                            .append("a", new BsonInt32(1))
                            .append("b", new BsonInt32(2))));
            assertThat(secondary(store, "d", "orders", "a_b").multikey()).isFalse();
            BsonDocument refused = store.command(
                    "d",
                    new BsonDocument("insert", new BsonString("orders"))
                            .append(
                                    "documents",
                                    new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(2))
                                            .append("a", new BsonArray(List.of(new BsonInt32(1), new BsonInt32(2))))
                                            .append("b", new BsonArray(List.of(new BsonInt32(3))))))));
            assertThat(refused.getArray("writeErrors")
                            .get(0)
                            .asDocument()
                            .getNumber("code")
                            .intValue())
                    .as(refused.toJson())
                    .isEqualTo(171); // CannotIndexParallelArrays, as MongoDB
            insert(
                    store,
                    List.of(
                            new BsonDocument("_id", new BsonInt32(3))
                                    .append(
                                            "a",
                                            new BsonArray(
                                                    List.of(new BsonInt32(5), new BsonInt32(4), new BsonInt32(5))))
                                    .append("b", new BsonInt32(0)),
                            new BsonDocument("_id", new BsonInt32(4))
                                    .append("a", new BsonArray())
                                    .append("b", new BsonInt32(0))));
            SecondaryIndex<?> index = secondary(store, "d", "orders", "a_b");
            assertThat(index.multikey()).isTrue();
            assertThat(index.getCount())
                    .as("one entry per distinct element, one for the empty array")
                    .isEqualTo(1 + 2 + 1);
            assertThat(store.find("d", "orders", new BsonDocument(), null, 0)).hasSize(3);
            store.command(
                    "d",
                    update(
                            new BsonDocument("_id", new BsonInt32(3)),
                            new BsonDocument("$set", new BsonDocument("a", new BsonInt32(9)))));
            assertEntriesAreTheDocuments(store, "d", "orders", "a_b");
            assertThat(index.getCount()).isEqualTo(3);
        }
    }

    /** Every member of a replica set keeps the index, through the writes it applies from the oplog. */
    @Test
    void everyMemberKeepsTheIndex() {
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder()
                        .name("indexed")
                        .members(3)
                        .build()
                        .start();
                MongoClient client = MongoClients.create(rs.connectionString())) {
            var orders = client.getDatabase("shop").getCollection("orders");
            List<Document> documents = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                documents.add(new Document("_id", i).append("createdAt", new java.util.Date(1_000_000L * (i % 17))));
            }
            orders.insertMany(documents.subList(0, 50));
            orders.createIndex(Indexes.ascending("createdAt"));
            orders.insertMany(documents.subList(50, 100));
            orders.updateMany(Filters.lt("_id", 30), Updates.set("createdAt", new java.util.Date(5)));
            orders.deleteMany(Filters.gte("_id", 80));
            orders.updateOne(Filters.eq("_id", 40), Updates.unset("createdAt"));
            assertThat(rs.awaitReplication(Duration.ofSeconds(30))).isTrue();
            for (Member member : rs.members()) {
                MemberStore store = member.state().store();
                assertThat(secondary(store, "shop", "orders", "createdAt_1").getCount())
                        .as(member.toString())
                        .isEqualTo(80);
                assertEntriesAreTheDocuments(store, "shop", "orders", "createdAt_1");
            }
        }
    }

    /**
     * The index's entries, walked in order, are exactly the entries its documents make (checked one by one), each
     * pointing at its document, in BSON order of the first key.
     */
    static void assertEntriesAreTheDocuments(MemberStore store, String db, String coll, String name) {
        SecondaryIndex<?> index = secondary(store, db, coll, name);
        TreeSet<KeyValue> expected = new TreeSet<>(index.order());
        Map<BsonValue, de.bwaldvogel.mongo.bson.Document> byId = new java.util.HashMap<>();
        for (var document : store.find(db, coll, new BsonDocument(), null, 0)) {
            de.bwaldvogel.mongo.bson.Document backend = BsonBridge.toBackend(document);
            expected.addAll(index.entriesOf(backend));
            byId.put(document.get("_id"), backend);
        }
        List<KeyValue> walked = new ArrayList<>();
        Iterator<? extends Map.Entry<KeyValue, ?>> entries = index.walk(null, null, false);
        KeyValue previous = null;
        while (entries.hasNext()) {
            Map.Entry<KeyValue, ?> entry = entries.next();
            KeyValue key = entry.getKey();
            walked.add(key);
            if (previous != null) {
                int byFirstKey = ValueComparator.ascWithoutListHandling().compare(previous.get(0), key.get(0));
                assertThat(index.getKeys().get(0).isAscending() ? byFirstKey : -byFirstKey)
                        .as("BSON order of %s then %s", previous, key)
                        .isLessThanOrEqualTo(0);
            }
            previous = key;
        }
        assertThat(walked).as("entries of %s", name).hasSameSizeAs(expected);
        Iterator<KeyValue> want = expected.iterator();
        for (KeyValue key : walked) {
            KeyValue wanted = want.next();
            assertThat(index.order().compare(key, wanted))
                    .as("%s where %s was expected", key, wanted)
                    .isZero();
        }
        assertThat(expected.stream().map(k -> k.get(k.size() - 1)).distinct().count())
                .as("every document has an entry")
                .isEqualTo(byId.size());
    }

    static SecondaryIndex<?> secondary(MemberStore store, String db, String coll, String name) {
        MongoCollection<?> collection = store.collection(db, coll).orElseThrow();
        for (Index<?> index : collection.getIndexes()) {
            if (index.getName().equals(name) && index instanceof SecondaryIndex<?> secondary) {
                return secondary;
            }
        }
        throw new AssertionError("no secondary index " + name + " in " + collection.getIndexes());
    }

    static BsonDocument createIndex(String coll, BsonDocument key, String name) {
        return new BsonDocument("createIndexes", new BsonString(coll))
                .append(
                        "indexes",
                        new BsonArray(List.of(new BsonDocument("key", key).append("name", new BsonString(name)))));
    }

    private static BsonDocument update(BsonDocument q, BsonDocument u) {
        return new BsonDocument("update", new BsonString("orders"))
                .append("updates", new BsonArray(List.of(new BsonDocument("q", q).append("u", u))));
    }

    static void insert(MemberStore store, List<BsonDocument> documents) {
        ok(store.command(
                "d",
                new BsonDocument("insert", new BsonString("orders"))
                        .append("documents", new BsonArray(new ArrayList<>(documents)))));
    }

    static void ok(BsonDocument reply) {
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isEqualTo(1);
        assertThat(reply.containsKey("writeErrors")).as(reply.toJson()).isFalse();
    }

    private static List<BsonDocument> randomDocuments(Random random, int from, int to) {
        List<BsonDocument> documents = new ArrayList<>();
        for (int i = from; i < to; i++) {
            BsonDocument document = new BsonDocument("_id", new BsonInt32(i));
            if (random.nextInt(8) != 0) {
                document.append("k", value(random));
            }
            document.append("n", new BsonInt32(random.nextInt(5)));
            documents.add(document);
        }
        return documents;
    }

    /** Values of several BSON types, equal ones among them (1 and 1.0), no arrays. */
    static BsonValue value(Random random) {
        return switch (random.nextInt(7)) {
            case 0 -> new BsonInt32(random.nextInt(10));
            case 1 -> new BsonDouble(random.nextInt(10));
            case 2 -> new BsonInt64(random.nextInt(10));
            case 3 -> new BsonString("s" + random.nextInt(5));
            case 4 -> BsonNull.VALUE;
            case 5 -> new BsonDateTime(random.nextInt(10));
            default -> new BsonDocument("x", new BsonInt32(random.nextInt(3)));
        };
    }
}
