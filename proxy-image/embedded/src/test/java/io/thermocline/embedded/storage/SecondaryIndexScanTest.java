package io.thermocline.embedded.storage;

import static io.thermocline.embedded.storage.SecondaryIndexTest.createIndex;
import static io.thermocline.embedded.storage.SecondaryIndexTest.ok;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A find sorted on a secondary index's keys is answered by walking the index, and its answer is the engine's scan's,
 * document for document and in order: over randomized documents (missing fields, nulls, mixed types, equal values of
 * different types) and randomized filters, sorts, skips, limits and projections, on both engines, against a twin
 * collection without the index. A multikey index is not walked; a writer moving documents while finds walk the index
 * never makes a find return a document twice, out of order, or not matching.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SecondaryIndexScanTest {

    @TempDir
    Path dir;

    private MemberStore open(String engine) {
        return MemberStore.open(engine.equals("disk") ? Storage.directory(dir) : Storage.memory(), "m");
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void aWalkedFindAnswersWhatTheScanAnswers(String engine) {
        try (MemberStore store = open(engine)) {
            Random random = new Random(3939);
            List<BsonDocument> documents = new ArrayList<>();
            Set<Integer> ids = new HashSet<>();
            while (documents.size() < 400) {
                BsonValue id = id(random);
                if (!ids.add(id.hashCode() * 31 + id.getBsonType().ordinal())) {
                    continue;
                }
                BsonDocument document = new BsonDocument("_id", id);
                if (random.nextInt(6) != 0) {
                    document.append("k", value(random));
                }
                if (random.nextInt(3) != 0) {
                    document.append("j", value(random));
                }
                document.append("pad", new BsonString("x".repeat(random.nextInt(20))));
                documents.add(document);
            }
            for (String coll : List.of("indexed", "plain")) {
                BsonDocument insert = new BsonDocument("insert", new BsonString(coll))
                        .append("documents", new BsonArray(new ArrayList<>(documents)))
                        .append("ordered", BsonBoolean.FALSE);
                assertThat(store.command("d", insert).getNumber("ok").intValue())
                        .isEqualTo(1);
            }
            ok(store.command("d", createIndex("indexed", new BsonDocument("k", new BsonInt32(1)), "k_1")));
            ok(store.command(
                    "d",
                    createIndex(
                            "indexed", new BsonDocument("j", new BsonInt32(-1)).append("k", new BsonInt32(1)), "j_k")));
            int walked = 0;
            for (int i = 0; i < 600; i++) {
                boolean compound = random.nextInt(3) == 0;
                int sense = random.nextBoolean() ? 1 : -1;
                BsonDocument sort = compound
                        ? new BsonDocument("j", new BsonInt32(-sense))
                                .append("k", new BsonInt32(sense))
                                .append("_id", new BsonInt32(sense))
                        : new BsonDocument("k", new BsonInt32(sense)).append("_id", new BsonInt32(sense));
                BsonDocument find = new BsonDocument("filter", filter(random, compound ? 2 : 1)).append("sort", sort);
                if (random.nextInt(3) != 0) {
                    find.append("limit", new BsonInt32(random.nextInt(3) == 0 ? 1 : random.nextInt(60)));
                }
                if (random.nextInt(4) == 0) {
                    find.append("skip", new BsonInt32(random.nextInt(10)));
                }
                if (random.nextInt(4) == 0) {
                    find.append(
                            "projection",
                            List.of(
                                            new BsonDocument("k", new BsonInt32(1)),
                                            new BsonDocument("_id", new BsonInt32(0)),
                                            new BsonDocument("pad", new BsonInt32(0)).append("j", new BsonInt32(0)),
                                            new BsonDocument("k", new BsonInt32(1)).append("_id", new BsonInt32(0)))
                                    .get(random.nextInt(4)));
                }
                find.append("batchSize", new BsonInt32(1 + random.nextInt(30)));
                long before = store.findsThroughSecondaryIndexes();
                BsonDocument indexed = new BsonDocument("find", new BsonString("indexed"));
                BsonDocument plain = new BsonDocument("find", new BsonString("plain"));
                find.forEach(indexed::append);
                find.forEach(plain::append);
                List<BsonDocument> expected = all(store, plain);
                List<BsonDocument> actual = all(store, indexed);
                assertThat(store.findsThroughSecondaryIndexes())
                        .as("walked: " + indexed.toJson() + " " + SecondaryIndexScan.request(indexed))
                        .isEqualTo(before + 1);
                assertThat(actual).as(indexed.toJson()).containsExactlyElementsOf(expected);
                walked += expected.isEmpty() ? 0 : 1;
            }
            assertThat(walked).as("finds that returned documents").isGreaterThan(300);
        }
    }

    /** The warmer's batch: a filter of ranges, $or and $nor on the age field, walked from the checkpoint down. */
    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void theWarmersBatchSeeksToItsCheckpoint(String engine) {
        try (MemberStore store = open(engine)) {
            BsonArray documents = new BsonArray();
            for (int i = 0; i < 3000; i++) {
                BsonValue age = i % 100 == 7 ? new BsonInt64(1_000_000L + i) : new BsonDateTime(1_000_000L + i / 2);
                documents.add(new BsonDocument("_id", new BsonString(String.format("user%06d", i)))
                        .append("createdAt", age)
                        .append("field0", new BsonString("v" + i)));
            }
            for (String coll : List.of("indexed", "plain")) {
                ok(store.command("d", new BsonDocument("insert", new BsonString(coll)).append("documents", documents)));
            }
            ok(store.command(
                    "d", createIndex("indexed", new BsonDocument("createdAt", new BsonInt32(1)), "createdAt_1")));
            BsonDateTime key = new BsonDateTime(1_000_000L + 1000);
            BsonDocument window = BsonDocument.parse(
                    "{$or: [{createdAt: {$gte: {$date: 1000500}}}, {createdAt: {$gte: {$numberLong: '1000500'}}}]}");
            BsonDocument nor = new BsonDocument(
                    "$nor",
                    new BsonArray(List.of(
                            new BsonDocument("createdAt", new BsonDocument("$gt", key)),
                            BsonDocument.parse("{createdAt: {$type: [17, 11, 127]}}"),
                            new BsonDocument(
                                    "$and",
                                    new BsonArray(List.of(
                                            new BsonDocument("createdAt", key),
                                            new BsonDocument(
                                                    "_id",
                                                    new BsonDocument("$gte", new BsonString("user002001")))))))));
            BsonDocument seek = new BsonDocument(
                    "$or",
                    new BsonArray(List.of(
                            new BsonDocument("createdAt", new BsonDocument("$lte", key)),
                            BsonDocument.parse("{createdAt: {$gte: {$numberLong: '1000500'}}}"))));
            for (BsonDocument after : List.of(nor, new BsonDocument("$and", new BsonArray(List.of(seek, nor))))) {
                BsonDocument filter = new BsonDocument("$and", new BsonArray(List.of(window, after)));
                BsonDocument find = new BsonDocument("filter", filter)
                        .append("projection", BsonDocument.parse("{_id: 1, createdAt: 1}"))
                        .append("sort", BsonDocument.parse("{createdAt: -1, _id: -1}"))
                        .append("limit", new BsonInt32(100));
                BsonDocument indexed = new BsonDocument("find", new BsonString("indexed"));
                BsonDocument plain = new BsonDocument("find", new BsonString("plain"));
                find.forEach(indexed::append);
                find.forEach(plain::append);
                long walkedBefore = store.secondaryIndexEntriesWalked();
                List<BsonDocument> actual = all(store, indexed);
                long walkedNow = store.secondaryIndexEntriesWalked() - walkedBefore;
                assertThat(actual)
                        .as(filter.toJson())
                        .containsExactlyElementsOf(all(store, plain))
                        .hasSize(100);
                assertThat(actual.get(0).get("createdAt")).isEqualTo(key);
                if (after == nor) {
                    assertThat(walkedNow)
                            .as("without the range: every entry above the checkpoint again")
                            .isGreaterThan(1000);
                } else {
                    assertThat(walkedNow).as("with it: from the checkpoint").isLessThan(110);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void aMultikeyIndexIsNotWalked(String engine) {
        try (MemberStore store = open(engine)) {
            ok(store.command("d", createIndex("indexed", new BsonDocument("k", new BsonInt32(1)), "k_1")));
            BsonArray documents = new BsonArray();
            for (int i = 0; i < 20; i++) {
                documents.add(new BsonDocument("_id", new BsonInt32(i)).append("k", new BsonInt32(20 - i)));
            }
            ok(store.command(
                    "d", new BsonDocument("insert", new BsonString("indexed")).append("documents", documents)));
            BsonDocument find =
                    BsonDocument.parse("{find: 'indexed', filter: {k: {$gte: 3}}, sort: {k: -1, _id: -1}, limit: 5}");
            long before = store.findsThroughSecondaryIndexes();
            assertThat(all(store, find))
                    .extracting(d -> d.getInt32("_id").getValue())
                    .containsExactly(0, 1, 2, 3, 4);
            assertThat(store.findsThroughSecondaryIndexes()).isEqualTo(before + 1);
            // an array's sort key is its greatest element descending, its least ascending: not the index's order
            ok(store.command(
                    "d",
                    new BsonDocument("insert", new BsonString("indexed"))
                            .append(
                                    "documents",
                                    new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(99))
                                            .append(
                                                    "k",
                                                    new BsonArray(List.of(new BsonInt32(1), new BsonInt32(50)))))))));
            assertThat(all(store, find))
                    .extracting(d -> d.getInt32("_id").getValue())
                    .containsExactly(99, 0, 1, 2, 3);
            assertThat(store.findsThroughSecondaryIndexes())
                    .as("left to the engine")
                    .isEqualTo(before + 1);
            // and a sort without the _id tie-break, or a filter on another field, is not walked either
            all(store, BsonDocument.parse("{find: 'indexed', sort: {k: -1}}"));
            all(store, BsonDocument.parse("{find: 'indexed', filter: {other: 1}, sort: {k: -1, _id: -1}}"));
            assertThat(store.findsThroughSecondaryIndexes()).isEqualTo(before + 1);
        }
    }

    /**
     * A writer keeps moving documents through the index (their key changes, so their entries move past the walk) while
     * finds walk it. Each find must return documents in the sort's order, each matching, none twice: the walk runs under
     * the collection's read lock, so no write changes an entry or a document between a find's first and last read.
     */
    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void aWriterMovingDocumentsWhileFindsWalkTheIndexNeverShowsAHalfMovedIndex(String engine) throws Exception {
        try (MemberStore store = open(engine)) {
            ok(store.command("d", createIndex("orders", new BsonDocument("k", new BsonInt32(1)), "k_1")));
            BsonArray documents = new BsonArray();
            for (int i = 0; i < 1000; i++) {
                documents.add(new BsonDocument("_id", new BsonInt32(i)).append("k", new BsonInt32(i)));
            }
            ok(store.command("d", new BsonDocument("insert", new BsonString("orders")).append("documents", documents)));
            AtomicBoolean reading = new AtomicBoolean(true);
            AtomicInteger moves = new AtomicInteger();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                Random random = new Random(7);
                while (reading.get()) {
                    // from the low end, where a descending walk ends, to the top, where it started
                    int id = random.nextInt(1000);
                    store.command(
                            "d",
                            BsonDocument.parse("{update: 'orders', updates: [{q: {_id: " + id + "}, u: {$set: {k: "
                                    + (1000 + moves.incrementAndGet()) + "}}}]}"));
                }
            });
            try {
                for (int i = 0; i < 80 || moves.get() < 300; i++) {
                    List<BsonDocument> found = all(
                            store,
                            BsonDocument.parse(
                                    "{find: 'orders', filter: {k: {$gte: 100}}, sort: {k: -1, _id: -1}, batchSize: 50}"));
                    Set<BsonValue> seen = new HashSet<>();
                    for (int j = 0; j < found.size(); j++) {
                        BsonDocument d = found.get(j);
                        assertThat(seen.add(d.get("_id")))
                                .as("returned twice: %s", d)
                                .isTrue();
                        assertThat(d.getInt32("k").getValue())
                                .as("matches the filter")
                                .isGreaterThanOrEqualTo(100);
                        if (j > 0) {
                            assertThat(d.getInt32("k").getValue())
                                    .as("in the sort's order at %d", j)
                                    .isLessThan(found.get(j - 1).getInt32("k").getValue());
                        }
                    }
                    assertThat(found).as("every document but those below 100").hasSizeGreaterThanOrEqualTo(900);
                }
            } finally {
                reading.set(false);
                writer.get(60, TimeUnit.SECONDS);
            }
            assertThat(moves.get()).as("the writer ran beside the walks").isGreaterThanOrEqualTo(300);
            SecondaryIndexTest.assertEntriesAreTheDocuments(store, "d", "orders", "k_1");
        }
    }

    /** A KeyRange table: the bound each condition puts on the field, and none where a condition cannot bound it. */
    @Test
    void rangesComeFromTopLevelConditionsOnTheField() {
        record Case(String filter, String low, String high) {}
        List<Case> cases = List.of(
                new Case("{k: 5}", "before 5", "after 5"),
                new Case("{k: {$gt: 5}}", "after 5", "after numbers"),
                new Case("{k: {$gte: 5, $lt: 9}}", "before 5", "before 9"),
                new Case("{k: {$lte: 'm'}}", "before strings", "after m"),
                new Case("{k: null}", "before null", "after null"),
                new Case("{k: {$in: [3, 1, 7]}}", "before 1", "after 7"),
                new Case("{k: {$in: [3, /x/]}}", null, null),
                new Case("{k: {$ne: 5}}", null, null),
                new Case("{k: {$gt: null}}", null, null),
                new Case("{j: 5}", null, null),
                new Case("{$and: [{k: {$gt: 1}}, {k: {$lt: 4}}]}", "after 1", "before 4"),
                new Case("{$or: [{k: {$gt: 1}}, {k: {$lt: -4}}]}", "before numbers", "after numbers"),
                new Case("{$or: [{k: {$gt: 1}}, {j: 2}]}", null, null),
                new Case("{$nor: [{k: {$gt: 1}}]}", null, null),
                new Case("{$or: [{k: {$gte: 3}}, {k: {$gte: 'a'}}]}", "before 3", "after strings"),
                new Case("{k: {$not: {$gt: 5}}}", null, null));
        for (Case c : cases) {
            KeyRange range = KeyRange.of(BsonBridge.toBackend(BsonDocument.parse(c.filter())), "k");
            assertThat(describe(range.low())).as("low of " + c.filter()).isEqualTo(c.low());
            assertThat(describe(range.high())).as("high of " + c.filter()).isEqualTo(c.high());
        }
        assertThat(KeyRange.of(BsonBridge.toBackend(BsonDocument.parse("{k: {$gt: 5, $lt: 2}}")), "k")
                        .empty())
                .isTrue();
        assertThat(KeyRange.of(BsonBridge.toBackend(BsonDocument.parse("{k: {$gte: 5, $lte: 5}}")), "k")
                        .empty())
                .isFalse();
    }

    private static String describe(IndexKeyOrder.Seek seek) {
        if (seek == null) {
            return null;
        }
        String side =
                seek.tier() == 1 ? (seek.side() < 0 ? "before " : "after ") : (seek.tier() == 0 ? "before " : "after ");
        if (seek.tier() != 1) {
            return side
                    + List.of("minkey", "null", "numbers", "strings", "documents")
                            .get(seek.rank());
        }
        Object v = seek.value();
        return side
                + (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())
                        ? String.valueOf(n.longValue())
                        : String.valueOf(v));
    }

    private static List<BsonDocument> all(MemberStore store, BsonDocument find) {
        List<BsonDocument> documents = new ArrayList<>();
        BsonDocument reply = store.command("d", find);
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isEqualTo(1);
        BsonDocument cursor = reply.getDocument("cursor");
        cursor.getArray("firstBatch").forEach(d -> documents.add(d.asDocument()));
        while (cursor.getNumber("id").longValue() != 0) {
            cursor = store.command(
                            "d",
                            new BsonDocument("getMore", cursor.get("id"))
                                    .append("collection", find.getString("find"))
                                    .append("batchSize", new BsonInt32(17)))
                    .getDocument("cursor");
            cursor.getArray("nextBatch").forEach(d -> documents.add(d.asDocument()));
        }
        return documents;
    }

    private static BsonValue id(Random random) {
        return switch (random.nextInt(4)) {
            case 0 -> new BsonInt32(random.nextInt(1000));
            case 1 -> new BsonString("id" + random.nextInt(1000));
            case 2 -> new BsonObjectId(new ObjectId(random.nextInt(1 << 20), random.nextInt(1 << 20)));
            default -> new BsonDouble(random.nextInt(1000) + 0.5);
        };
    }

    /** Values of several types, equal values of different numeric types among them; no arrays (see the multikey test). */
    private static BsonValue value(Random random) {
        return switch (random.nextInt(9)) {
            case 0, 1 -> new BsonInt32(random.nextInt(12));
            case 2 -> new BsonDouble(random.nextInt(12) / 2.0);
            case 3 -> new BsonInt64(random.nextInt(12));
            case 4 -> new BsonString("s" + random.nextInt(6));
            case 5 -> BsonNull.VALUE;
            case 6 -> new BsonDateTime(random.nextInt(12));
            case 7 -> BsonBoolean.valueOf(random.nextBoolean());
            default -> new BsonDocument("x", new BsonInt32(random.nextInt(3)));
        };
    }

    /** A filter on k (and j when the index has it) and _id: ranges, equality, $in, negations, $and/$or/$nor. */
    private static BsonDocument filter(Random random, int fields) {
        BsonDocument filter = new BsonDocument();
        int conditions = random.nextInt(3);
        for (int i = 0; i < conditions; i++) {
            String field = switch (random.nextInt(fields + 1)) {
                case 0 -> "k";
                case 1 -> fields == 2 ? "j" : "_id";
                default -> "_id";
            };
            BsonDocument condition = condition(random, field);
            condition.forEach((name, value) -> {
                if (!filter.containsKey(name)) {
                    filter.append(name, value);
                }
            });
        }
        return filter;
    }

    private static BsonDocument condition(Random random, String field) {
        BsonValue v = field.equals("_id") ? id(random) : value(random);
        return switch (random.nextInt(12)) {
            case 0 -> new BsonDocument(field, v);
            case 1 -> new BsonDocument(field, new BsonDocument("$gt", v));
            case 2 ->
                new BsonDocument(
                        field,
                        new BsonDocument("$gte", v).append("$lt", field.equals("_id") ? id(random) : value(random)));
            case 3 -> new BsonDocument(field, new BsonDocument("$lte", v));
            case 4 ->
                new BsonDocument(
                        field, new BsonDocument("$in", new BsonArray(List.of(v, value(random), value(random)))));
            case 5 -> new BsonDocument(field, new BsonDocument("$ne", v));
            case 6 -> new BsonDocument(field, new BsonDocument("$exists", BsonBoolean.valueOf(random.nextBoolean())));
            case 7 ->
                new BsonDocument("$or", new BsonArray(List.of(condition(random, field), condition(random, field))));
            case 8 -> new BsonDocument("$nor", new BsonArray(List.of(condition(random, field))));
            case 9 ->
                new BsonDocument("$and", new BsonArray(List.of(condition(random, field), condition(random, "k"))));
            case 10 ->
                new BsonDocument(
                        field,
                        new BsonDocument(
                                "$type",
                                new BsonString(List.of("number", "string", "date", "null")
                                        .get(random.nextInt(4)))));
            default -> new BsonDocument(field, new BsonDocument("$not", new BsonDocument("$lt", v)));
        };
    }
}
