package io.thermocline.proxy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.embedded.EmbeddedReplicaSet;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Applications keep their users: users created, changed and dropped on the archive log in (or
 * stop logging in) through the proxy within the refresh bound, and no password or stored key
 * reaches a log line, the metrics or an error.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ArchiveUsersTest {
    private static final Duration BOUND = Duration.ofSeconds(1);
    /** How long a test waits for the proxy to follow: far past BOUND, since a loaded machine can stall any step. */
    private static final Duration FOLLOWS = Duration.ofSeconds(30);

    private EmbeddedReplicaSet archive;
    private SecuredProxy secured;
    private MongoClient archiveAdmin;
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

    private ch.qos.logback.classic.Level levelBefore;

    @BeforeEach
    void start() {
        // Every line the project logs, debug included, is checked for secrets.
        Logger project = (Logger) LoggerFactory.getLogger("io.thermocline");
        levelBefore = project.getLevel();
        project.setLevel(ch.qos.logback.classic.Level.DEBUG);
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
        logs.start();
        // The archive requires authentication, as a real one does: the proxy reads users and forwards traffic as its own user.
        archive = EmbeddedReplicaSet.builder().requireAuthentication(true).user("thermocline-proxy", "proxy-secret-pw", "root").build().start();
        String withProxyUser = archive.connectionString().replace("mongodb://", "mongodb://thermocline-proxy:proxy-secret-pw@");
        secured = SecuredProxy.fromConfig(archive, withProxyUser,
                "auth:\n  mode: required\n  users: [archive]\n  refreshInterval: 1s\n  missRetryInterval: 200ms\n");
        archiveAdmin = MongoClients.create(withProxyUser);
    }

    @AfterEach
    void stop() throws Exception {
        archiveAdmin.close();
        secured.close();
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
        ((Logger) LoggerFactory.getLogger("io.thermocline")).setLevel(levelBefore);
    }

    private MongoClient viaProxy(String user, String password) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(secured.uri("", "?serverSelectionTimeoutMS=3000")))
                .credential(MongoCredential.createCredential(user, "shop", password.toCharArray())).build());
    }

    private boolean logsIn(String user, String password) {
        try (MongoClient c = viaProxy(user, password)) {
            c.getDatabase("admin").runCommand(new Document("ping", 1));
            c.getDatabase("shop").getCollection("orders").countDocuments();
            return true;
        } catch (MongoSecurityException e) {
            return false;
        }
    }

    @Test
    void aUserCreatedChangedAndDroppedOnTheArchiveFollowsThroughTheProxyWithoutARestart() throws Exception {
        assertThat(logsIn("app", "app-first-pw")).isFalse();
        archiveAdmin.getDatabase("shop").runCommand(new Document("createUser", "app").append("pwd", "app-first-pw")
                .append("roles", List.of("readWrite")));
        await().atMost(FOLLOWS).pollInterval(Duration.ofMillis(50)).until(() -> logsIn("app", "app-first-pw"));

        archiveAdmin.getDatabase("shop").runCommand(new Document("updateUser", "app").append("pwd", "app-second-pw"));
        await().atMost(FOLLOWS).pollInterval(Duration.ofMillis(100))
                .until(() -> !logsIn("app", "app-first-pw") && logsIn("app", "app-second-pw"));

        archiveAdmin.getDatabase("shop").runCommand(new Document("dropUser", "app"));
        await().atMost(FOLLOWS).pollInterval(Duration.ofMillis(100)).until(() -> !logsIn("app", "app-second-pw"));

        // Nothing secret anywhere: passwords, and the stored keys and salts the archive handed the proxy.
        List<String> secrets = new ArrayList<>(List.of("app-first-pw", "app-second-pw", "proxy-secret-pw"));
        archiveAdmin.getDatabase("admin").runCommand(new Document("usersInfo", new Document("user", "thermocline-proxy").append("db", "admin"))
                .append("showCredentials", true)).getList("users", Document.class).get(0).get("credentials", Document.class)
                .values().forEach(v -> ((Document) v).forEach((k, x) -> {
                    if (!k.equals("iterationCount")) {
                        secrets.add(String.valueOf(x));
                    }
                }));
        String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + secured.proxy.httpPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        List<String> lines = new ArrayList<>();
        for (ILoggingEvent e : List.copyOf(logs.list)) {
            lines.add(e.getFormattedMessage() + (e.getThrowableProxy() == null ? "" : " " + e.getThrowableProxy().getMessage()));
        }
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("event=auth_failed user=app@shop"));
        for (String secret : secrets) {
            assertThat(lines).as("log lines").noneSatisfy(l -> assertThat(l).contains(secret));
            assertThat(metrics).as("metrics").doesNotContain(secret);
        }
        try (MongoClient c = viaProxy("app", "app-second-pw")) {
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("orders").countDocuments())
                    .isInstanceOf(MongoSecurityException.class)
                    .satisfies(e -> secrets.forEach(s -> assertThat(String.valueOf(e.getCause().getMessage())).doesNotContain(s)));
        }
    }

    @Test
    void theArchivesPrivilegesComeWithTheUser() {
        archiveAdmin.getDatabase("shop").runCommand(new Document("createUser", "viewer").append("pwd", "viewer-pw")
                .append("roles", List.of("read")));
        await().atMost(FOLLOWS).until(() -> logsIn("viewer", "viewer-pw"));
        try (MongoClient c = viaProxy("viewer", "viewer-pw")) {
            Document status = c.getDatabase("admin").runCommand(new Document("connectionStatus", 1).append("showPrivileges", true));
            Document info = status.get("authInfo", Document.class);
            assertThat(info.getList("authenticatedUserRoles", Document.class)).containsExactly(new Document("role", "read").append("db", "shop"));
            assertThat(info.getList("authenticatedUserPrivileges", Document.class)).anySatisfy(p ->
                    assertThat(p.get("resource", Document.class)).isEqualTo(new Document("db", "shop").append("collection", "")));
        }
    }
}
