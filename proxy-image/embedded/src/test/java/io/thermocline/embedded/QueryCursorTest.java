package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Query cursors as a server serves them: batch sizes, the default first batch, killCursors, getMore's namespace. */
@Timeout(60)
class QueryCursorTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;
    private static MongoDatabase db;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.startSingle();
        client = MongoClients.create(rs.connectionString());
        db = client.getDatabase("cursors");
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            docs.add(new Document("_id", i).append("even", i % 2 == 0));
        }
        db.getCollection("items").insertMany(docs);
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    @Test
    void aFindServesItsResultInTheBatchesAskedFor() {
        Document first = db.runCommand(new Document("find", "items").append("filter", new Document("even", true)).append("batchSize", 50));
        Document cursor = first.get("cursor", Document.class);
        assertThat(cursor.getList("firstBatch", Document.class)).hasSize(50);
        assertThat(cursor.getString("ns")).isEqualTo("cursors.items");
        long id = cursor.getLong("id");
        assertThat(id).isNotZero();
        Document next = db.runCommand(new Document("getMore", id).append("collection", "items").append("batchSize", 60))
                .get("cursor", Document.class);
        assertThat(next.getList("nextBatch", Document.class)).hasSize(60);
        Document last = db.runCommand(new Document("getMore", id).append("collection", "items")).get("cursor", Document.class);
        assertThat(last.getList("nextBatch", Document.class)).hasSize(15);
        assertThat(last.getLong("id")).as("exhausted").isZero();
        // the driver's iteration sees every matching document once
        assertThat(db.getCollection("items").find(Filters.eq("even", true)).batchSize(7).into(new ArrayList<>())).hasSize(125);
    }

    @Test
    void withoutABatchSizeTheFirstBatchHolds101DocumentsAndSingleBatchClosesTheCursor() {
        Document cursor = db.runCommand(new Document("find", "items")).get("cursor", Document.class);
        assertThat(cursor.getList("firstBatch", Document.class)).hasSize(101);
        assertThat(cursor.getLong("id")).isNotZero();
        Document single = db.runCommand(new Document("find", "items").append("batchSize", 5).append("singleBatch", true))
                .get("cursor", Document.class);
        assertThat(single.getList("firstBatch", Document.class)).hasSize(5);
        assertThat(single.getLong("id")).isZero();
        Document aggregate = db.runCommand(new Document("aggregate", "items").append("pipeline", List.of(new Document("$match", new Document("even", false))))
                .append("cursor", new Document("batchSize", 100))).get("cursor", Document.class);
        assertThat(aggregate.getList("firstBatch", Document.class)).hasSize(100);
        assertThat(aggregate.getLong("id")).isNotZero();
    }

    @Test
    void aKilledCursorIsGoneAndAGetMoreNamingAnotherCollectionIsRefused() {
        long id = db.runCommand(new Document("find", "items").append("batchSize", 1)).get("cursor", Document.class).getLong("id");
        MongoCommandException wrongNamespace = catchThrowableOfType(
                () -> db.runCommand(new Document("getMore", id).append("collection", "other")), MongoCommandException.class);
        assertThat(wrongNamespace.getErrorCode()).isEqualTo(13);
        Document killed = db.runCommand(new Document("killCursors", "items").append("cursors", List.of(id, 12345L)));
        assertThat(killed.getList("cursorsKilled", Long.class)).containsExactly(id);
        assertThat(killed.getList("cursorsNotFound", Long.class)).containsExactly(12345L);
        MongoCommandException gone = catchThrowableOfType(
                () -> db.runCommand(new Document("getMore", id).append("collection", "items")), MongoCommandException.class);
        assertThat(gone.getErrorCode()).isEqualTo(43);
    }
}
