package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import java.util.List;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RetryableWriteTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;
    private static MongoDatabase db;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.startSingle();
        client = MongoClients.create(rs.connectionString());
        db = client.getDatabase("retry");
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    private static BsonDocument lsid() {
        return new BsonDocument("id", new BsonBinary(UUID.randomUUID(), UuidRepresentation.STANDARD));
    }

    @Test
    void theSameLsidAndTxnNumberIsAppliedOnce() {
        BsonDocument lsid = lsid();
        Document inc = new Document("update", "counters")
            .append("updates", List.of(new Document("q", new Document("_id", "c")).append("u", new Document("$inc", new Document("n", 1)))
                .append("upsert", true)))
            .append("lsid", lsid).append("txnNumber", 1L);
        Document first = db.runCommand(inc);
        Document retried = db.runCommand(inc);
        assertThat(retried.get("n")).isEqualTo(first.get("n"));
        assertThat(retried.get("operationTime")).isEqualTo(first.get("operationTime"));
        assertThat(db.getCollection("counters").find(new Document("_id", "c")).first().getInteger("n")).isEqualTo(1);
        db.runCommand(inc.append("txnNumber", 2L));
        assertThat(db.getCollection("counters").find(new Document("_id", "c")).first().getInteger("n")).isEqualTo(2);
    }

    /** As a server checks a session out to one command at a time: two attempts of one txnNumber at once apply once. */
    @Test
    void concurrentAttemptsOfOneTxnNumberApplyOnce() throws Exception {
        BsonDocument lsid = lsid();
        int rounds = 40;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (long txn = 1; txn <= rounds; txn++) {
                Document inc = new Document("update", "concurrent")
                    .append("updates", List.of(new Document("q", new Document("_id", "c")).append("u", new Document("$inc", new Document("n", 1)))
                        .append("upsert", true)))
                    .append("lsid", lsid).append("txnNumber", txn);
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                List<java.util.concurrent.Future<Document>> both = List.of(
                    pool.submit(() -> { go.await(); return db.runCommand(inc); }),
                    pool.submit(() -> { go.await(); return db.runCommand(inc); }));
                go.countDown();
                for (java.util.concurrent.Future<Document> f : both) {
                    f.get(30, java.util.concurrent.TimeUnit.SECONDS);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(db.getCollection("concurrent").find(new Document("_id", "c")).first().getInteger("n")).isEqualTo(rounds);
    }

    @Test
    void anOlderTxnNumberIsRejected() {
        BsonDocument lsid = lsid();
        db.runCommand(new Document("insert", "old").append("documents", List.of(new Document("_id", 1)))
            .append("lsid", lsid).append("txnNumber", 5L));
        assertThatThrownBy(() -> db.runCommand(new Document("insert", "old").append("documents", List.of(new Document("_id", 2)))
            .append("lsid", lsid).append("txnNumber", 4L)))
            .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(225));
    }

    @Test
    void theDriverRetriesAWriteWhoseConnectionClosed() {
        db.runCommand(new Document("configureFailPoint", "failCommand").append("mode", new Document("times", 1))
            .append("data", new Document("failCommands", List.of("insert")).append("closeConnection", true)));
        db.getCollection("closed").insertOne(new Document("_id", 1));
        assertThat(db.getCollection("closed").countDocuments()).isEqualTo(1);
    }

    @Test
    void aRetryableErrorCarriesTheRetryableWriteErrorLabel() {
        db.runCommand(new Document("configureFailPoint", "failCommand").append("mode", new Document("times", 1))
            .append("data", new Document("failCommands", List.of("insert")).append("errorCode", 6)));
        db.getCollection("labelled").insertOne(new Document("_id", 1));
        assertThat(db.getCollection("labelled").countDocuments()).isEqualTo(1);
    }
}
