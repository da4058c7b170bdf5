package io.thermocline.proxy;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.auth.UsersFile;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.authentication.LoginThrottle;
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

import java.nio.file.Files;
import java.nio.file.Path;
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

    /**
     * Issue 41 item 2: the session's owner on one replica, another user on another replica of the same fleet. Each
     * attempt on the owner's session is refused as mongod refuses it (the other user reaches a session of its own:
     * NoSuchTransaction; another user's cursor: Unauthorized), and the owner carries on from the second replica.
     */
    @Test
    void anotherUserOnAnotherReplicaCannotHijackASessionStartedOnTheFirst() throws Exception {
        Path users = Files.createTempFile("thermocline-users", ".yaml");
        Files.writeString(users, SecuredProxy.USERS);
        Path secret = ProxyFleet.secretFile("fleet-secret-of-the-session-test-0123");
        try (EmbeddedReplicaSet archive = EmbeddedReplicaSet.startSingle();
             ProxyFleet fleet = new ProxyFleet(archive.connectionString(), 4)) {
            ProxyServer a = fleet.startReplica(secret, required(users));
            ProxyServer b = fleet.startReplica(secret, required(users));
            fleet.awaitLive(2);
            try (WireClient aliceOnA = new WireClient(a.port()).login("alice", "alice-pw");
                 WireClient aliceOnB = new WireClient(b.port()).login("alice", "alice-pw");
                 WireClient reporterOnB = new WireClient(b.port()).login("reporter", "reporter-pw")) {
                BsonDocument lsid = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
                for (int i = 0; i < 10; i++) {
                    assertOk(aliceOnA.command(insert(lsid, i + 1, i)).body());
                }
                BsonDocument first = aliceOnA.command(BsonDocument.parse("{find: 'reports', batchSize: 2, $db: 'shop'}")
                        .append("lsid", lsid)).body();
                assertOk(first);
                BsonInt64 cursor = new BsonInt64(first.getDocument("cursor").getNumber("id").longValue());
                long txn = 20;
                assertOk(aliceOnA.command(inTransaction(BsonDocument.parse("{insert: 'reports', documents: [{_id: 100}], $db: 'shop'}"),
                        lsid, txn).append("startTransaction", BsonBoolean.TRUE)).body());

                BsonDocument read = reporterOnB.command(inTransaction(BsonDocument.parse("{find: 'reports', filter: {_id: 100}, $db: 'shop'}"),
                        lsid, txn)).body();
                assertRefused(read, 251, "NoSuchTransaction");
                assertRefused(reporterOnB.command(inTransaction(new BsonDocument("abortTransaction", new BsonInt32(1))
                        .append("$db", new BsonString("admin")), lsid, txn)).body(), 251, "NoSuchTransaction");
                assertRefused(reporterOnB.command(inTransaction(new BsonDocument("commitTransaction", new BsonInt32(1))
                        .append("$db", new BsonString("admin")), lsid, txn)).body(), 251, "NoSuchTransaction");
                assertOk(reporterOnB.command(insert(lsid, 99, 200)).body()); // its own session: the owner's txnNumbers stay usable
                assertRefused(reporterOnB.command(new BsonDocument("getMore", cursor).append("collection", new BsonString("reports"))
                        .append("lsid", lsid).append("$db", new BsonString("shop"))).body(), 13, "Unauthorized");
                assertRefused(reporterOnB.command(new BsonDocument("killCursors", new BsonString("reports"))
                        .append("cursors", new BsonArray(List.of(cursor))).append("lsid", lsid).append("$db", new BsonString("shop"))).body(),
                        13, "Unauthorized");
                // without the session too: the cursor is the owner's, whatever session the request names
                assertRefused(reporterOnB.command(new BsonDocument("getMore", cursor).append("collection", new BsonString("reports"))
                        .append("$db", new BsonString("shop"))).body(), 13, "Unauthorized");
                assertRefused(reporterOnB.command(new BsonDocument("killCursors", new BsonString("reports"))
                        .append("cursors", new BsonArray(List.of(cursor))).append("$db", new BsonString("shop"))).body(), 13, "Unauthorized");
                assertOk(reporterOnB.command(new BsonDocument("endSessions", new BsonArray(List.of(lsid)))
                        .append("$db", new BsonString("admin"))).body());

                // the owner continues on the other replica: its cursor, its transaction, its retryable writes
                BsonDocument next = aliceOnB.command(new BsonDocument("getMore", cursor).append("collection", new BsonString("reports"))
                        .append("batchSize", new BsonInt32(2)).append("lsid", lsid).append("$db", new BsonString("shop"))).body();
                assertOk(next);
                assertThat(next.getDocument("cursor").getArray("nextBatch")).hasSize(2);
                BsonDocument own = aliceOnB.command(inTransaction(BsonDocument.parse("{find: 'reports', filter: {_id: 100}, $db: 'shop'}"),
                        lsid, txn)).body();
                assertOk(own);
                assertThat(own.getDocument("cursor").getArray("firstBatch")).as("the owner reads its transaction's write").hasSize(1);
                assertOk(aliceOnB.command(inTransaction(new BsonDocument("commitTransaction", new BsonInt32(1))
                        .append("$db", new BsonString("admin")), lsid, txn)).body());
                assertOk(aliceOnB.command(insert(lsid, txn + 1, 101)).body());
                BsonDocument committed = aliceOnA.command(BsonDocument.parse("{count: 'reports', query: {_id: {$in: [100, 101]}}, $db: 'shop'}")).body();
                assertThat(committed.getNumber("n").intValue()).as(committed.toJson()).isEqualTo(2);
            }
        } finally {
            Files.deleteIfExists(users);
        }
    }

    private static ProxySecurity required(Path users) {
        return new ProxySecurity(ProxySecurity.Mode.REQUIRED, new UsersFile(users), LoginThrottle.off(), ClientTls.disabled());
    }

    private static BsonDocument inTransaction(BsonDocument command, BsonDocument lsid, long txnNumber) {
        return command.append("lsid", lsid).append("txnNumber", new BsonInt64(txnNumber)).append("autocommit", BsonBoolean.FALSE);
    }

    private static void assertRefused(BsonDocument reply, int code, String codeName) {
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isZero();
        assertThat(reply.getNumber("code").intValue()).as(reply.toJson()).isEqualTo(code);
        assertThat(reply.getString("codeName").getValue()).as(reply.toJson()).isEqualTo(codeName);
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
