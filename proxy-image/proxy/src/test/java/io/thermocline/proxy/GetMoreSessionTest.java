package io.thermocline.proxy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A cursor opened in a logical session continues only in that session, as mongod rules it: with
 * authorization on, any other session (or none) is 13 "Cursor session id (...) is not the same as the
 * operation context's session id (...)", where a session is its id and its user's digest; without it,
 * mongod's 50736 / 50737 / 50738. The cursor stays open for its own session, on the replica that holds
 * it and on one that forwards the getMore.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GetMoreSessionTest {

    @Test
    void withAuthorizationAGetMoreInAnotherSessionOrNoneGets13AndTheCursorGoesOnInItsOwn() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start(); MongoClient alice = secured.client("alice", "alice-pw")) {
            MongoDatabase shop = alice.getDatabase("shop");
            shop.getCollection("reports").insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
            try (ClientSession mine = alice.startSession(); ClientSession other = alice.startSession()) {
                long id = open(shop, mine);
                String opened = session(mine, "alice@admin");
                assertRefused(() -> shop.runCommand(other, getMore(id)), 13, "Cursor session id (" + opened
                        + ") is not the same as the operation context's session id (" + session(other, "alice@admin") + ")");
                try (WireClient wire = new WireClient(secured.proxy.port()).login("alice", "alice-pw")) {
                    BsonDocument none = wire.command(getMore(id).append("$db", new BsonString("shop"))).body();
                    assertError(none, 13, "Cursor session id (" + opened + ") is not the same as the operation context's session id (none)");
                }
                // the same session id sent by another user is another session
                try (WireClient wire = new WireClient(secured.proxy.port()).login("reporter", "reporter-pw")) {
                    BsonDocument sameId = wire.command(getMore(id).append("lsid", mine.getServerSession().getIdentifier())
                            .append("$db", new BsonString("shop"))).body();
                    assertError(sameId, 13, "Cursor session id (" + opened + ") is not the same as the operation context's session id ("
                            + session(mine, "reporter@admin") + ")");
                }
                Document next = shop.runCommand(mine, getMore(id));
                assertThat(next.get("cursor", Document.class).getList("nextBatch", Document.class)).hasSize(2);
            }
            // without a session on either side, another user still gets mongod's creator refusal
            try (WireClient opener = new WireClient(secured.proxy.port()).login("alice", "alice-pw");
                 WireClient other = new WireClient(secured.proxy.port()).login("reporter", "reporter-pw")) {
                long id = opener.command(BsonDocument.parse("{find: 'reports', batchSize: 2, $db: 'shop'}")).body()
                        .getDocument("cursor").getInt64("id").getValue();
                assertError(other.command(getMore(id).append("$db", new BsonString("shop"))).body(), 13,
                        "cursor id " + id + " was not created by the authenticated user");
            }
        }
    }

    @Test
    void withoutAuthorizationMongodsSessionCodesApplyOnTheOwnerAndThroughAPeer() throws Exception {
        try (EmbeddedReplicaSet archive = EmbeddedReplicaSet.startSingle(); ProxyFleet fleet = new ProxyFleet(archive.connectionString(), 12)) {
            ProxyServer a = fleet.startReplica();
            ProxyServer b = fleet.startReplica();
            fleet.awaitLive(2);
            try (MongoClient onA = MongoClients.create(ProxyFleet.uri(a)); MongoClient onB = MongoClients.create(ProxyFleet.uri(b))) {
                onA.getDatabase("shop").getCollection("reports")
                        .insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
                for (MongoClient continuer : new MongoClient[] {onA, onB}) {
                    try (ClientSession mine = onA.startSession(); ClientSession other = continuer.startSession()) {
                        long id = open(onA.getDatabase("shop"), mine);
                        String opened = session(mine, null);
                        assertRefused(() -> continuer.getDatabase("shop").runCommand(other, getMore(id)), 50738,
                                "Cannot run getMore on cursor " + id + ", which was created in session " + opened
                                        + ", in session " + session(other, null));
                        int port = continuer == onA ? a.port() : b.port();
                        try (WireClient wire = new WireClient(port)) {
                            assertError(wire.command(getMore(id).append("$db", new BsonString("shop"))).body(), 50737,
                                    "Cannot run getMore on cursor " + id + ", which was created in session " + opened + ", without an lsid");
                            BsonDocument same = wire.command(getMore(id).append("lsid", mine.getServerSession().getIdentifier())
                                    .append("$db", new BsonString("shop"))).body();
                            assertThat(same.getDocument("cursor").getArray("nextBatch")).as(same.toJson()).hasSize(2);
                            long sessionless = wire.command(BsonDocument.parse("{find: 'reports', batchSize: 2, $db: 'shop'}")).body()
                                    .getDocument("cursor").getInt64("id").getValue();
                            assertRefused(() -> continuer.getDatabase("shop").runCommand(other, getMore(sessionless)), 50736,
                                    "Cannot run getMore on cursor " + sessionless + ", which was not created in a session, in session "
                                            + session(other, null));
                        }
                    }
                }
            }
        }
    }

    /** mongod's text of a logical session: id, the SHA-256 of {@code user@db} (of "" for nobody), no transaction. */
    static String session(ClientSession session, String user) throws Exception {
        ByteBuffer id = ByteBuffer.wrap(session.getServerSession().getIdentifier().getBinary("id").getData());
        byte[] digest = MessageDigest.getInstance("SHA-256").digest((user == null ? "" : user).getBytes(StandardCharsets.UTF_8));
        return new UUID(id.getLong(), id.getLong()) + " - " + Base64.getEncoder().encodeToString(digest) + " -  - ";
    }

    private static long open(MongoDatabase db, ClientSession session) {
        Document first = db.runCommand(session, new Document("find", "reports").append("batchSize", 2));
        long id = first.get("cursor", Document.class).getLong("id");
        assertThat(id).as(first.toJson()).isNotZero();
        return id;
    }

    private static BsonDocument getMore(long id) {
        return new BsonDocument("getMore", new BsonInt64(id)).append("collection", new BsonString("reports"))
                .append("batchSize", new BsonInt32(2));
    }

    private static void assertRefused(Runnable command, int code, String message) {
        assertThatThrownBy(command::run).isInstanceOfSatisfying(MongoCommandException.class, e -> {
            assertThat(e.getErrorCode()).as(e.getMessage()).isEqualTo(code);
            assertThat(e.getErrorMessage()).isEqualTo(message);
        });
    }

    private static void assertError(BsonDocument reply, int code, String message) {
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isZero();
        assertThat(reply.getInt32("code").getValue()).as(reply.toJson()).isEqualTo(code);
        assertThat(reply.getString("errmsg").getValue()).isEqualTo(message);
        assertThat(reply.getString("codeName").getValue()).isEqualTo(code == 13 ? "Unauthorized" : "Location" + code);
    }

}
