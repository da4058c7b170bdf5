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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A collection renamed on the on-disk engine ({@code renameCollection}, and {@code $out}, which writes a temporary
 * collection and renames it over its target) keeps its documents and its {@code _id} index under the new name,
 * across a restart, and in the stable key order. mongo-java-server 1.47's H2 backend read the collection's name
 * after renaming it, so it renamed nothing: the documents stayed in maps of the old name and the new name got
 * empty maps in H2's own key order (listDatabases then failed H2's assertion on the next open of the database,
 * and a restart would have shown the collection empty).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RenamedCollectionTest {
    private static final int DOCUMENTS = 40;

    @TempDir
    Path dir;

    private static void insertOrders(MemberStore store, String collection) {
        List<BsonValue> documents = new ArrayList<>();
        for (int i = 0; i < DOCUMENTS; i++) {
            documents.add(
                    new BsonDocument("_id", new BsonDocument("order", new BsonInt32(i))).append("n", new BsonInt32(i)));
        }
        BsonDocument reply = store.command(
                "db1",
                new BsonDocument("insert", new BsonString(collection)).append("documents", new BsonArray(documents)));
        assertThat(reply.getNumber("n").intValue()).as(reply.toJson()).isEqualTo(DOCUMENTS);
    }

    private static void assertHoldsEveryOrder(MemberStore store, String collection) {
        assertThat(store.collectionNames("db1")).contains(collection);
        for (int i = 0; i < DOCUMENTS; i++) {
            assertThat(store.findById("db1", collection, new BsonDocument("order", new BsonInt32(i))))
                    .as("order " + i + " by _id in " + collection)
                    .isPresent();
        }
        BsonDocument count = store.command("db1", new BsonDocument("count", new BsonString(collection)));
        assertThat(count.getNumber("n").intValue()).as(count.toJson()).isEqualTo(DOCUMENTS);
        BsonDocument duplicate = store.command(
                "db1",
                new BsonDocument("insert", new BsonString(collection))
                        .append(
                                "documents",
                                new BsonArray(List.of(
                                        new BsonDocument("_id", new BsonDocument("order", new BsonInt32(7)))))));
        assertThat(duplicate.containsKey("writeErrors"))
                .as("a second document with a stored _id: " + duplicate)
                .isTrue();
    }

    private static void assertListsDatabases(MemberStore store) {
        BsonDocument list = store.command("admin", new BsonDocument("listDatabases", new BsonInt32(1)));
        assertThat(list.getNumber("ok").intValue()).as(list.toJson()).isEqualTo(1);
    }

    @Test
    void aRenamedCollectionKeepsItsDocumentsAndIndexAcrossARestart() {
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            insertOrders(store, "orders");
            BsonDocument renamed = store.command(
                    "admin",
                    new BsonDocument("renameCollection", new BsonString("db1.orders"))
                            .append("to", new BsonString("db1.archived")));
            assertThat(renamed.getNumber("ok").intValue()).as(renamed.toJson()).isEqualTo(1);
            assertHoldsEveryOrder(store, "archived");
        }
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            assertListsDatabases(store);
            assertHoldsEveryOrder(store, "archived");
            assertThat(store.collectionNames("db1")).doesNotContain("orders");
        }
    }

    @Test
    void outReplacingACollectionKeepsTheResultAcrossARestartAndListDatabasesStillAnswers() {
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            insertOrders(store, "orders");
            for (int round = 0; round < 2; round++) { // the second $out replaces the first one's result
                BsonDocument out = store.command(
                        "db1",
                        new BsonDocument("aggregate", new BsonString("orders"))
                                .append(
                                        "pipeline",
                                        new BsonArray(List.of(new BsonDocument("$out", new BsonString("report")))))
                                .append("cursor", new BsonDocument()));
                assertThat(out.getNumber("ok").intValue()).as(out.toJson()).isEqualTo(1);
            }
            assertHoldsEveryOrder(store, "report");
            assertListsDatabases(store); // it opens each database's maps again
        }
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "m")) {
            assertListsDatabases(store);
            assertHoldsEveryOrder(store, "report");
            assertHoldsEveryOrder(store, "orders");
        }
    }
}
