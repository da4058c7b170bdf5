package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A filter that requires an _id condition beside others (the proxy restricts each chunk of a multi-document write to its
 * documents so) finds its candidates through the _id index and matches the rest: the same documents as the engine's
 * scan of the collection, on both engines.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdRestrictedFindTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void anIdRestrictedFilterFindsWhatTheScanFinds(String engine) {
        try (MemberStore store =
                MemberStore.open(engine.equals("disk") ? Storage.directory(dir) : Storage.memory(), "m")) {
            BsonArray documents = new BsonArray();
            for (int i = 0; i < 200; i++) {
                documents.add(new BsonDocument("_id", new BsonInt32(i))
                        .append("status", new BsonString(i % 3 == 0 ? "placed" : "paid"))
                        .append("items", new BsonInt32(i % 7)));
            }
            store.command("d", new BsonDocument("insert", new BsonString("orders")).append("documents", documents));
            BsonArray some = new BsonArray();
            for (int i = 0; i < 200; i += 4) {
                some.add(new BsonInt32(i));
            }
            some.add(new BsonInt32(10_000)); // an id no document has
            BsonDocument in = new BsonDocument("_id", new BsonDocument("$in", some));
            BsonDocument placed = new BsonDocument("status", new BsonString("placed"));
            List<BsonDocument> filters = List.of(
                    new BsonDocument("$and", new BsonArray(List.of(placed, in))),
                    new BsonDocument(
                            "$and",
                            new BsonArray(
                                    List.of(in, new BsonDocument("items", new BsonDocument("$gt", new BsonInt32(3)))))),
                    new BsonDocument("_id", new BsonDocument("$in", some)).append("status", new BsonString("paid")),
                    in, // alone: one index lookup per value
                    new BsonDocument(
                            "_id",
                            new BsonDocument(
                                    "$in",
                                    new BsonArray(List.of(
                                            new BsonInt32(8),
                                            new org.bson.BsonDouble(8.0),
                                            new org.bson.BsonInt64(8),
                                            new BsonInt32(12))))), // equal values of three types find one document
                    new BsonDocument(
                            "$and",
                            new BsonArray(List.of(
                                    placed, in, new BsonDocument("items", new BsonDocument("$gt", new BsonInt32(3)))))),
                    new BsonDocument("_id", new BsonInt32(12)).append("status", new BsonString("placed")),
                    new BsonDocument("_id", new BsonInt32(13)).append("status", new BsonString("placed")),
                    new BsonDocument(
                            "$and",
                            new BsonArray(List.of(
                                    new BsonDocument("_id", new BsonDocument("$gte", new BsonInt32(150))), placed))));
            for (BsonDocument filter : filters) {
                assertThat(IdIndexScan.idCondition(filter))
                        .as("taken through the _id index: " + filter.toJson())
                        .isPresent();
                // the same filter nested once more is not recognized: the engine scans the collection for it
                BsonDocument scanned = new BsonDocument(
                        "$and", new BsonArray(List.of(new BsonDocument("$and", new BsonArray(List.of(filter))))));
                assertThat(IdIndexScan.idCondition(scanned)).isEmpty();
                List<BsonValue> expected = ids(store.find("d", "orders", scanned, null, 0));
                assertThat(ids(store.find("d", "orders", filter, null, 0)))
                        .as(filter.toJson())
                        .containsExactlyInAnyOrderElementsOf(expected);
                assertThat(store.find("d", "orders", filter, null, 1))
                        .as("limit 1: " + filter.toJson())
                        .hasSize(Math.min(1, expected.size()))
                        .allSatisfy(d -> assertThat(expected).contains(d.get("_id")));
            }
            BsonDocument pattern = new BsonDocument(
                    "_id", new BsonDocument("$in", new BsonArray(List.of(new org.bson.BsonRegularExpression("^1")))));
            assertThat(IdIndexScan.idCondition(pattern))
                    .as("a pattern in $in is no equality lookup")
                    .isEmpty();
            assertThat(ids(store.find(
                            "d", "orders", new BsonDocument("$and", new BsonArray(List.of(placed, in))), null, 0)))
                    .as("ids divisible by 4 and by 3, below 200")
                    .hasSize(17);
        }
    }

    /**
     * A find command whose filter the _id index answers (the layer's majority reads of a chunk's documents) returns what
     * the engine's own find returns, in batches as asked; one with a projection, sort or skip goes to the engine.
     */
    @ParameterizedTest
    @ValueSource(strings = {"memory", "disk"})
    void aFindCommandByIdsAnswersWhatTheEnginesFindAnswers(String engine) {
        try (MemberStore store =
                MemberStore.open(engine.equals("disk") ? Storage.directory(dir) : Storage.memory(), "m")) {
            BsonArray documents = new BsonArray();
            BsonArray some = new BsonArray();
            for (int i = 0; i < 120; i++) {
                documents.add(new BsonDocument("_id", new BsonInt32(i)).append("n", new BsonInt32(i % 5)));
                if (i % 3 == 0) {
                    some.add(new BsonInt32(i));
                }
            }
            store.command("d", new BsonDocument("insert", new BsonString("orders")).append("documents", documents));
            BsonDocument in = new BsonDocument("_id", new BsonDocument("$in", some));
            for (BsonDocument filter : List.of(
                    in,
                    new BsonDocument("$and", new BsonArray(List.of(in, new BsonDocument("n", new BsonInt32(0))))))) {
                BsonDocument scanned = new BsonDocument(
                        "$and", new BsonArray(List.of(new BsonDocument("$and", new BsonArray(List.of(filter))))));
                BsonDocument command = new BsonDocument("find", new BsonString("orders")).append("filter", filter);
                assertThat(IdIndexScan.plainFind(command)).as(filter.toJson()).isPresent();
                assertThat(IdIndexScan.plainFind(command.clone().append("skip", new BsonInt32(2))))
                        .isEmpty();
                assertThat(IdIndexScan.plainFind(
                                command.clone().append("projection", new BsonDocument("n", new BsonInt32(1)))))
                        .isEmpty();
                List<BsonValue> expected = allOf(
                        store,
                        new BsonDocument("find", new BsonString("orders"))
                                .append("filter", scanned)
                                .append("batchSize", new BsonInt32(7)));
                assertThat(expected).isNotEmpty();
                assertThat(allOf(store, command.clone().append("batchSize", new BsonInt32(7))))
                        .as(filter.toJson())
                        .containsExactlyInAnyOrderElementsOf(expected);
                assertThat(allOf(store, command.clone().append("limit", new BsonInt32(3))))
                        .hasSize(Math.min(3, expected.size()))
                        .allSatisfy(id -> assertThat(expected).contains(id));
            }
        }
    }

    /** Every document a find command's cursor returns, through its getMores. */
    private static List<BsonValue> allOf(MemberStore store, BsonDocument find) {
        List<BsonValue> ids = new ArrayList<>();
        BsonDocument reply = store.command("d", find);
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isEqualTo(1);
        BsonDocument cursor = reply.getDocument("cursor");
        cursor.getArray("firstBatch").forEach(d -> ids.add(d.asDocument().get("_id")));
        while (cursor.getNumber("id").longValue() != 0) {
            cursor = store.command(
                            "d",
                            new BsonDocument("getMore", cursor.get("id"))
                                    .append("collection", new BsonString("orders"))
                                    .append("batchSize", new BsonInt32(7)))
                    .getDocument("cursor");
            cursor.getArray("nextBatch").forEach(d -> ids.add(d.asDocument().get("_id")));
        }
        return ids;
    }

    private static List<BsonValue> ids(List<RawBsonDocument> documents) {
        List<BsonValue> ids = new ArrayList<>();
        documents.forEach(d -> ids.add(d.get("_id")));
        return ids;
    }
}
