package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import io.thermocline.proxy.cursor.ProxyCursorIds;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The official sync driver through the proxy, against one backend. */
class SyncDriverTest {
    private static ProxyFixture fixture;
    private static MongoClient client;
    private static final List<CommandStartedEvent> commands = new CopyOnWriteArrayList<>();
    private MongoCollection<Document> coll;

    @BeforeAll
    static void start() {
        fixture = ProxyFixture.start();
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(fixture.uri()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        commands.add(event);
                    }
                }).build());
    }

    @AfterAll
    static void stop() {
        client.close();
        fixture.close();
    }

    @BeforeEach
    void clean() {
        coll = client.getDatabase("app").getCollection("items");
        coll.drop();
        commands.clear();
    }

    @Test
    void driverSeesTheProxyAsAMongos() {
        Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
        assertThat(hello.getString("msg")).isEqualTo("isdbgrid");
        assertThat(hello.getBoolean("isWritablePrimary")).isTrue();
        assertThat(hello.getInteger("maxWireVersion")).isEqualTo(8);
        assertThat(client.getClusterDescription().getType().name()).isEqualTo("SHARDED");
    }

    @Test
    void crudRoundTrips() {
        coll.insertOne(new Document("_id", 1).append("name", "a").append("n", 1));
        coll.insertMany(List.of(new Document("_id", 2).append("n", 2), new Document("_id", 3).append("n", 3)));
        assertThat(coll.find(Filters.eq("_id", 1)).first()).containsEntry("name", "a");
        assertThat(coll.updateOne(Filters.eq("_id", 2), Updates.set("name", "b")).getModifiedCount()).isEqualTo(1);
        assertThat(coll.replaceOne(Filters.eq("_id", 3), new Document("n", 30)).getMatchedCount()).isEqualTo(1);
        assertThat(coll.find(Filters.eq("_id", 3)).first()).containsEntry("n", 30);
        assertThat(coll.deleteOne(Filters.eq("_id", 1)).getDeletedCount()).isEqualTo(1);
        assertThat(coll.countDocuments()).isEqualTo(2);
        assertThat(coll.estimatedDocumentCount()).isEqualTo(2);
    }

    @Test
    void bulkWriteUsesDocumentSequencesAndReportsCounts() {
        var result = coll.bulkWrite(List.of(
                new InsertOneModel<>(new Document("_id", 1)), new InsertOneModel<>(new Document("_id", 2)),
                new InsertOneModel<>(new Document("_id", 3)),
                new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("x", 1)),
                new DeleteOneModel<>(Filters.eq("_id", 3))));
        assertThat(result.getInsertedCount()).isEqualTo(3);
        assertThat(result.getModifiedCount()).isEqualTo(1);
        assertThat(result.getDeletedCount()).isEqualTo(1);
        assertThat(coll.find().into(new ArrayList<>())).extracting(d -> d.get("_id")).containsExactly(1, 2);
        coll.insertMany(IntStream.range(10, 2010).mapToObj(i -> new Document("_id", i)).toList());
        assertThat(coll.countDocuments()).isEqualTo(2002);
    }

    @Test
    void cursorOfThousandDocumentsInBatchesOfSeven() {
        coll.insertMany(IntStream.range(0, 1000).mapToObj(i -> new Document("_id", i).append("v", "x".repeat(20))).toList());
        commands.clear();
        List<Integer> ids = new ArrayList<>();
        try (MongoCursor<Document> cursor = coll.find().sort(Sorts.ascending("_id")).batchSize(7).iterator()) {
            cursor.forEachRemaining(d -> ids.add(d.getInteger("_id")));
        }
        assertThat(ids).containsExactlyElementsOf(IntStream.range(0, 1000).boxed().toList());
        long getMores = commands.stream().filter(c -> c.getCommandName().equals("getMore")).count();
        assertThat(getMores).isEqualTo(142);
        assertThat(fixture.proxy().metrics()).isNotNull();
    }

    @Test
    void killCursorsKillsTheCursorAndLaterGetMoreFindsNothing() {
        coll.insertMany(IntStream.range(0, 100).mapToObj(i -> new Document("_id", i)).toList());
        Document first = client.getDatabase("app").runCommand(new Document("find", "items").append("batchSize", 10));
        long proxyCursorId = first.get("cursor", Document.class).getLong("id");
        assertThat(proxyCursorId).isNotZero();
        Document killed = client.getDatabase("app").runCommand(new Document("killCursors", "items")
                .append("cursors", List.of(proxyCursorId, 4242L)));
        assertThat(killed.getList("cursorsKilled", Long.class)).containsExactly(proxyCursorId);
        assertThat(killed.getList("cursorsNotFound", Long.class)).containsExactly(4242L);
        assertThatThrownBy(() -> client.getDatabase("app").runCommand(
                new Document("getMore", proxyCursorId).append("collection", "items")))
                .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(43));
    }

    @Test
    void cursorIdsAreTheProxysOwnAndNameTheInstance() {
        coll.insertMany(IntStream.range(0, 20).mapToObj(i -> new Document("_id", i)).toList());
        Document first = client.getDatabase("app").runCommand(new Document("find", "items").append("batchSize", 2));
        long id = first.get("cursor", Document.class).getLong("id");
        assertThat(ProxyCursorIds.ownerOf(id)).isEqualTo(ProxyCursorIds.instanceBitsOf("test-proxy-0"));
        Document next = client.getDatabase("app").runCommand(new Document("getMore", id).append("collection", "items").append("batchSize", 2));
        assertThat(next.get("cursor", Document.class).getLong("id")).isEqualTo(id);
        assertThat(next.get("cursor", Document.class).getList("nextBatch", Document.class)).hasSize(2);
    }

    @Test
    void aggregateCountDistinct() {
        coll.insertMany(List.of(new Document("k", "a").append("v", 1), new Document("k", "a").append("v", 2),
                new Document("k", "b").append("v", 5)));
        List<Document> groups = coll.aggregate(List.of(Aggregates.group("$k", Accumulators.sum("total", "$v")),
                Aggregates.sort(Sorts.ascending("_id")))).into(new ArrayList<>());
        assertThat(groups).extracting(d -> d.get("total")).containsExactly(3, 5);
        assertThat(coll.countDocuments(Filters.eq("k", "a"))).isEqualTo(2);
        assertThat(coll.distinct("k", String.class).into(new ArrayList<>())).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void findAndModifyReturnsTheNewDocument() {
        coll.insertOne(new Document("_id", "c").append("n", 1));
        Document after = coll.findOneAndUpdate(Filters.eq("_id", "c"), Updates.inc("n", 5),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
        assertThat(after).containsEntry("n", 6);
        assertThat(coll.findOneAndDelete(Filters.eq("_id", "c"))).containsEntry("n", 6);
    }

    @Test
    void indexesAndListCollections() {
        coll.insertOne(new Document("email", "a@x"));
        coll.createIndex(Indexes.ascending("email"), new IndexOptions().unique(true).name("email_1"));
        assertThat(coll.listIndexes().into(new ArrayList<>())).extracting(d -> d.getString("name")).contains("_id_", "email_1");
        assertThat(client.getDatabase("app").listCollectionNames().into(new ArrayList<>())).contains("items");
        coll.dropIndex("email_1");
        assertThat(coll.listIndexes().into(new ArrayList<>())).extracting(d -> d.getString("name")).doesNotContain("email_1");
    }

    @Test
    void duplicateKeyErrorReachesTheClientWithCode11000() {
        coll.insertOne(new Document("_id", 7));
        assertThatThrownBy(() -> coll.insertOne(new Document("_id", 7)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(11000));
    }

    @Test
    void fifteenMegabyteDocumentRoundTrips() {
        String big = "y".repeat(15 * 1024 * 1024);
        coll.insertOne(new Document("_id", "big").append("payload", big));
        Document back = coll.find(Filters.eq("_id", "big")).first();
        assertThat(back.getString("payload")).hasSize(big.length()).isEqualTo(big);
    }
}
