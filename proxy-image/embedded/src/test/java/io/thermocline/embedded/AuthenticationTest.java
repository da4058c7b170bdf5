package io.thermocline.embedded;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The embedded set with {@code requireAuthentication}: SCRAM logins and mongod's user-management commands. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AuthenticationTest {
    private static EmbeddedReplicaSet rs;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().members(2).requireAuthentication(true).user("admin", "admin-pw", "root").build().start();
    }

    @AfterAll
    static void stop() {
        rs.close();
    }

    private static MongoClient client(MongoCredential credential) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(rs.connectionString() + "&serverSelectionTimeoutMS=5000"));
        if (credential != null) {
            b.credential(credential);
        }
        return MongoClients.create(b.build());
    }

    @Test
    void bothMechanismsLogInAndUnauthenticatedCommandsGet13() {
        for (MongoCredential c : List.of(MongoCredential.createScramSha256Credential("admin", "admin", "admin-pw".toCharArray()),
                MongoCredential.createScramSha1Credential("admin", "admin", "admin-pw".toCharArray()),
                MongoCredential.createCredential("admin", "admin", "admin-pw".toCharArray()))) {
            try (MongoClient client = client(c)) {
                client.getDatabase("t").getCollection("c").insertOne(new Document("m", String.valueOf(c.getMechanism())));
            }
        }
        try (MongoClient anonymous = client(null)) {
            assertThatThrownBy(() -> anonymous.getDatabase("t").getCollection("c").find().first())
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(13));
        }
        try (MongoClient wrong = client(MongoCredential.createScramSha256Credential("admin", "admin", "nope".toCharArray()))) {
            assertThatThrownBy(() -> wrong.getDatabase("t").getCollection("c").find().first()).isInstanceOf(MongoSecurityException.class);
        }
    }

    @Test
    void usersCreatedByCommandLogInAndUsersInfoShowsCredentialsAndPrivileges() {
        try (MongoClient admin = client(MongoCredential.createScramSha256Credential("admin", "admin", "admin-pw".toCharArray()))) {
            admin.getDatabase("shop").runCommand(new Document("createRole", "ordersReader")
                    .append("privileges", List.of(new Document("resource", new Document("db", "shop").append("collection", "orders"))
                            .append("actions", List.of("find"))))
                    .append("roles", List.of(new Document("role", "read").append("db", "stats"))));
            admin.getDatabase("shop").runCommand(new Document("createUser", "clerk").append("pwd", "clerk-pw")
                    .append("roles", List.of("ordersReader")));
            Document info = admin.getDatabase("shop").runCommand(new Document("usersInfo", "clerk")
                    .append("showCredentials", true).append("showPrivileges", true));
            Document user = info.getList("users", Document.class).get(0);
            assertThat(user.get("credentials", Document.class).keySet()).containsExactlyInAnyOrder("SCRAM-SHA-1", "SCRAM-SHA-256");
            assertThat(user.get("credentials", Document.class).get("SCRAM-SHA-256", Document.class).keySet())
                    .containsExactlyInAnyOrder("iterationCount", "salt", "storedKey", "serverKey");
            assertThat(user.getList("inheritedRoles", Document.class)).extracting(d -> d.getString("role"))
                    .containsExactly("ordersReader", "read");
            assertThat(user.getList("inheritedPrivileges", Document.class)).extracting(d -> d.get("resource", Document.class).toJson())
                    .contains("{\"db\": \"shop\", \"collection\": \"orders\"}", "{\"db\": \"stats\", \"collection\": \"\"}");
            Document plain = admin.getDatabase("shop").runCommand(new Document("usersInfo", "clerk"));
            assertThat(plain.getList("users", Document.class).get(0).containsKey("credentials")).isFalse();
            assertThatThrownBy(() -> admin.getDatabase("shop").runCommand(new Document("createUser", "clerk").append("pwd", "x")
                    .append("roles", List.of()))).isInstanceOfSatisfying(MongoCommandException.class,
                    e -> assertThat(e.getErrorCode()).isEqualTo(51003));
        }
        try (MongoClient clerk = client(MongoCredential.createCredential("clerk", "shop", "clerk-pw".toCharArray()))) {
            Document status = clerk.getDatabase("admin").runCommand(new Document("connectionStatus", 1));
            assertThat(status.get("authInfo", Document.class).getList("authenticatedUsers", Document.class))
                    .containsExactly(new Document("user", "clerk").append("db", "shop"));
        }
    }
}
