package io.thermocline.proxy;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A logical session belongs to the user that uses it, at the backend too (issue 25, items 1 and 4): the
 * proxy reaches the backend as one user of its own, so it derives a backend session per client user, and
 * another user (or a connection that never logged in) sending the same session id reaches a session of its
 * own: it cannot read into, abort, commit or poison the owner's transactions and retryable writes, nor end
 * the owner's session and kill its cursors.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SessionOwnershipTest {

    @Test
    void anotherUserSendingTheOwnersSessionIdCannotReadAbortOrCommitItsTransaction() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start(); MongoClient alice = secured.client("alice", "alice-pw");
             WireClient reporter = new WireClient(secured.proxy.port()).login("reporter", "reporter-pw")) {
            MongoCollection<Document> reports = alice.getDatabase("shop").getCollection("reports");
            reports.insertOne(new Document("_id", 0));
            try (ClientSession owner = alice.startSession()) {
                owner.startTransaction();
                reports.insertOne(owner, new Document("_id", 1));
                BsonDocument lsid = owner.getServerSession().getIdentifier();
                long txnNumber = owner.getServerSession().getTransactionNumber();
                BsonDocument read = reporter.command(BsonDocument.parse("{find: 'reports', filter: {_id: 1}, $db: 'shop'}")
                        .append("lsid", lsid).append("txnNumber", new BsonInt64(txnNumber)).append("autocommit", BsonBoolean.FALSE)).body();
                assertThat(read.toJson()).as("another user's read in the owner's transaction").doesNotContain("\"_id\": 1");
                BsonDocument abort = reporter.command(new BsonDocument("abortTransaction", new BsonInt32(1)).append("lsid", lsid)
                        .append("txnNumber", new BsonInt64(txnNumber)).append("autocommit", BsonBoolean.FALSE)
                        .append("$db", new BsonString("admin"))).body();
                assertThat(abort.getNumber("ok").intValue()).as(abort.toJson()).isZero();
                owner.commitTransaction();
            }
            assertThat(reports.countDocuments(new Document("_id", 1))).isEqualTo(1);
        }
    }

    @Test
    void anotherUsersHigherTxnNumberDoesNotPoisonTheOwnersRetryableWrites() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start();
             WireClient alice = new WireClient(secured.proxy.port()).login("alice", "alice-pw");
             WireClient reporter = new WireClient(secured.proxy.port()).login("reporter", "reporter-pw")) {
            BsonDocument lsid = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
            assertOk(alice.command(insert(lsid, 1, 1)).body());
            assertOk(reporter.command(insert(lsid, 99, 2)).body());
            assertOk(alice.command(insert(lsid, 2, 3)).body());
        }
    }

    @Test
    void endSessionsFromAConnectionThatNeverLoggedInLeavesTheOwnersCursors() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start(); MongoClient alice = secured.client("alice", "alice-pw");
             WireClient stranger = new WireClient(secured.proxy.port())) {
            MongoCollection<Document> reports = alice.getDatabase("shop").getCollection("reports");
            reports.insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
            try (ClientSession owner = alice.startSession()) {
                Document first = alice.getDatabase("shop").runCommand(owner, new Document("find", "reports").append("batchSize", 2));
                long id = first.get("cursor", Document.class).getLong("id");
                BsonDocument ended = stranger.command(new BsonDocument("endSessions",
                        new BsonArray(List.of(owner.getServerSession().getIdentifier()))).append("$db", new BsonString("admin"))).body();
                assertOk(ended);
                Document next = alice.getDatabase("shop").runCommand(owner, new Document("getMore", id).append("collection", "reports")
                        .append("batchSize", 2));
                assertThat(next.get("cursor", Document.class).getList("nextBatch", Document.class)).hasSize(2);
            }
        }
    }

    private static BsonDocument insert(BsonDocument lsid, long txnNumber, int id) {
        return new BsonDocument("insert", new BsonString("reports"))
                .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(id)))))
                .append("lsid", lsid).append("txnNumber", new BsonInt64(txnNumber)).append("$db", new BsonString("shop"));
    }

    private static void assertOk(BsonDocument reply) {
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isEqualTo(1);
        assertThat(reply.containsKey("writeErrors")).as(reply.toJson()).isFalse();
    }
}
