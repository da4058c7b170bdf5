package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.wire.OpMsg;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** SCRAM through the proxy with the official Java driver (sync and reactive) and at the wire level. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuthenticationTest {
    private static SecuredProxy secured;

    @BeforeAll
    static void start() throws Exception {
        secured = SecuredProxy.start();
    }

    @AfterAll
    static void stop() throws Exception {
        secured.close();
    }

    private static MongoClient client(MongoCredential credential) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(secured.uri("", "?serverSelectionTimeoutMS=5000")));
        if (credential != null) {
            b.credential(credential);
        }
        return MongoClients.create(b.build());
    }

    private static Document status(MongoClient c) {
        return c.getDatabase("admin").runCommand(new Document("connectionStatus", 1)).get("authInfo", Document.class);
    }

    @Test
    void scramSha256WithTheRightPasswordLogsInAndWorks() {
        try (MongoClient c = client(MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray()))) {
            c.getDatabase("shop").getCollection("sha256").insertOne(new Document("_id", 1));
            assertThat(c.getDatabase("shop").getCollection("sha256").countDocuments()).isEqualTo(1);
            assertThat(status(c).getList("authenticatedUsers", Document.class))
                    .containsExactly(new Document("user", "alice").append("db", "admin"));
            assertThat(status(c).getList("authenticatedUserRoles", Document.class))
                    .containsExactly(new Document("role", "readWrite").append("db", "shop"));
        }
    }

    @Test
    void scramSha1WithTheRightPasswordLogsIn() {
        try (MongoClient c = client(MongoCredential.createScramSha1Credential("sha1only", "admin", "old-pw".toCharArray()))) {
            assertThat(status(c).getList("authenticatedUsers", Document.class))
                    .containsExactly(new Document("user", "sha1only").append("db", "admin"));
        }
    }

    @Test
    void theDriverNegotiatesTheMechanismFromSaslSupportedMechs() {
        // No mechanism: the driver asks saslSupportedMechs and speculates SCRAM-SHA-256; a SHA-1-only user must still work.
        try (MongoClient c = client(MongoCredential.createCredential("sha1only", "admin", "old-pw".toCharArray()))) {
            assertThat(status(c).getList("authenticatedUsers", Document.class)).hasSize(1);
        }
        try (MongoClient c = client(MongoCredential.createCredential("alice", "admin", "alice-pw".toCharArray()))) {
            assertThat(status(c).getList("authenticatedUsers", Document.class)).hasSize(1);
        }
    }

    @Test
    void saslPrepAppliesToSha256UserPasswords() {
        // The file's password is U+2168; "IX" is what SASLprep makes of it, so both log in.
        for (String password : List.of("\u2168", "IX")) {
            try (MongoClient c = client(MongoCredential.createScramSha256Credential("I\u00ADX", "admin", password.toCharArray()))) {
                assertThat(status(c).getList("authenticatedUsers", Document.class)).hasSize(1);
            }
        }
    }

    @Test
    void wrongPasswordUnknownUserAndWrongDatabaseAllFailWith18AndTheSameMessage() {
        List<MongoCredential> bad = List.of(
                MongoCredential.createScramSha256Credential("alice", "admin", "wrong".toCharArray()),
                MongoCredential.createScramSha1Credential("sha1only", "admin", "wrong".toCharArray()),
                MongoCredential.createScramSha256Credential("nobody", "admin", "alice-pw".toCharArray()),
                MongoCredential.createScramSha256Credential("alice", "shop", "alice-pw".toCharArray()));
        for (MongoCredential credential : bad) {
            try (MongoClient c = client(credential)) {
                assertThatThrownBy(() -> c.getDatabase("shop").getCollection("x").countDocuments())
                        .as(credential.getUserName() + "@" + credential.getSource())
                        .isInstanceOf(MongoSecurityException.class)
                        .cause().isInstanceOfSatisfying(MongoCommandException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(18);
                            assertThat(e.getErrorMessage()).isEqualTo("Authentication failed.");
                        });
            }
        }
    }

    @Test
    void commandsBeforeAuthenticationGet13ButTheHandshakeAndPingWork() {
        try (MongoClient c = client(null)) {
            assertThat(c.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok")).isEqualTo(1.0);
            assertThat(status(c).getList("authenticatedUsers", Document.class)).isEmpty();
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("x").find().first())
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(13);
                        assertThat(e.getErrorCodeName()).isEqualTo("Unauthorized");
                        assertThat(e.getErrorMessage()).isEqualTo("command find requires authentication");
                    });
        }
    }

    @Test
    void theReactiveDriverAuthenticatesWithBothMechanisms() {
        for (MongoCredential credential : List.of(
                MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray()),
                MongoCredential.createScramSha1Credential("sha1only", "admin", "old-pw".toCharArray()))) {
            try (com.mongodb.reactivestreams.client.MongoClient c = com.mongodb.reactivestreams.client.MongoClients.create(
                    MongoClientSettings.builder().applyConnectionString(new ConnectionString(secured.uri("", "?serverSelectionTimeoutMS=5000")))
                            .credential(credential).build())) {
                Document reply = Mono.from(c.getDatabase("admin").runCommand(new Document("connectionStatus", 1))).block();
                assertThat(reply.get("authInfo", Document.class).getList("authenticatedUsers", Document.class))
                        .containsExactly(new Document("user", credential.getUserName()).append("db", "admin"));
            }
        }
        MongoCredential wrong = MongoCredential.createScramSha256Credential("alice", "admin", "nope".toCharArray());
        try (com.mongodb.reactivestreams.client.MongoClient c = com.mongodb.reactivestreams.client.MongoClients.create(
                MongoClientSettings.builder().applyConnectionString(new ConnectionString(secured.uri("", "?serverSelectionTimeoutMS=5000")))
                        .credential(wrong).build())) {
            assertThatThrownBy(() -> Mono.from(c.getDatabase("admin").runCommand(new Document("ping", 1))).block())
                    .isInstanceOf(MongoSecurityException.class);
        }
    }

    @Test
    void speculativeAuthenticationInHelloSavesARoundTripAndLogoutForgetsTheUser() throws Exception {
        ScramTestClient scram = new ScramTestClient("alice", "alice-pw", "speculative-nonce");
        try (WireClient wire = new WireClient(secured.proxy.port())) {
            BsonDocument hello = wire.command(new BsonDocument("hello", new BsonInt32(1))
                    .append("saslSupportedMechs", new BsonString("admin.alice"))
                    .append("speculativeAuthenticate", new BsonDocument("saslStart", new BsonInt32(1))
                            .append("mechanism", new BsonString("SCRAM-SHA-256"))
                            .append("payload", new BsonBinary(scram.clientFirst()))
                            .append("options", new BsonDocument("skipEmptyExchange", BsonBoolean.TRUE))
                            .append("db", new BsonString("admin")))
                    .append("$db", new BsonString("admin"))).body();
            assertThat(hello.getArray("saslSupportedMechs")).containsExactly(new BsonString("SCRAM-SHA-256"), new BsonString("SCRAM-SHA-1"));
            BsonDocument spec = hello.getDocument("speculativeAuthenticate");
            BsonDocument last = wire.command(new BsonDocument("saslContinue", new BsonInt32(1))
                    .append("conversationId", spec.get("conversationId"))
                    .append("payload", new BsonBinary(scram.clientFinal(spec.getBinary("payload").getData())))
                    .append("$db", new BsonString("admin"))).body();
            assertThat(last.getBoolean("done").getValue()).as(last.toJson()).isTrue();
            assertThat(new String(last.getBinary("payload").getData())).startsWith("v=");
            assertThat(authenticatedUsers(wire)).isEqualTo(1);

            assertThat(wire.command(new BsonDocument("logout", new BsonInt32(1)).append("$db", new BsonString("admin"))).body()
                    .getNumber("ok").intValue()).isEqualTo(1);
            assertThat(authenticatedUsers(wire)).isZero();
            BsonDocument refused = wire.command(new BsonDocument("find", new BsonString("x")).append("$db", new BsonString("shop"))).body();
            assertThat(refused.getInt32("code").getValue()).isEqualTo(13);
        }
    }

    @Test
    void withoutSkipEmptyExchangeTheConversationTakesTheExtraEmptyRound() throws Exception {
        ScramTestClient scram = new ScramTestClient("alice", "alice-pw", "three-rounds");
        try (WireClient wire = new WireClient(secured.proxy.port())) {
            BsonDocument first = wire.command(new BsonDocument("saslStart", new BsonInt32(1))
                    .append("mechanism", new BsonString("SCRAM-SHA-256")).append("payload", new BsonBinary(scram.clientFirst()))
                    .append("$db", new BsonString("admin"))).body();
            BsonDocument second = wire.command(continueWith(first, scram.clientFinal(first.getBinary("payload").getData()))).body();
            assertThat(second.getBoolean("done").getValue()).isFalse();
            assertThat(authenticatedUsers(wire)).isZero();
            BsonDocument third = wire.command(continueWith(second, new byte[0])).body();
            assertThat(third.getBoolean("done").getValue()).isTrue();
            assertThat(authenticatedUsers(wire)).isEqualTo(1);
        }
    }

    @Test
    void unknownUsersAreAdvertisedBothMechanismsSoTheHandshakeRevealsNothing() throws Exception {
        try (WireClient wire = new WireClient(secured.proxy.port())) {
            BsonDocument sha1 = wire.command(new BsonDocument("hello", new BsonInt32(1))
                    .append("saslSupportedMechs", new BsonString("admin.sha1only")).append("$db", new BsonString("admin"))).body();
            assertThat(sha1.getArray("saslSupportedMechs")).containsExactly(new BsonString("SCRAM-SHA-1"));
            BsonDocument ghost = wire.command(new BsonDocument("hello", new BsonInt32(1))
                    .append("saslSupportedMechs", new BsonString("admin.ghost")).append("$db", new BsonString("admin"))).body();
            BsonDocument alice = wire.command(new BsonDocument("hello", new BsonInt32(1))
                    .append("saslSupportedMechs", new BsonString("admin.alice")).append("$db", new BsonString("admin"))).body();
            // issue 25 item 10: an unknown user's answer is an existing two-mechanism user's, order included (mongod's order)
            assertThat(ghost.getArray("saslSupportedMechs")).isEqualTo(alice.getArray("saslSupportedMechs"))
                    .containsExactly(new BsonString("SCRAM-SHA-256"), new BsonString("SCRAM-SHA-1"));
        }
    }

    static BsonDocument continueWith(BsonDocument previous, byte[] payload) {
        return new BsonDocument("saslContinue", new BsonInt32(1)).append("conversationId", previous.get("conversationId"))
                .append("payload", new BsonBinary(payload)).append("$db", new BsonString("admin"));
    }

    static int authenticatedUsers(WireClient wire) throws Exception {
        OpMsg status = wire.command(new BsonDocument("connectionStatus", new BsonInt32(1)).append("$db", new BsonString("admin")));
        return status.body().getDocument("authInfo").getArray("authenticatedUsers").size();
    }
}
