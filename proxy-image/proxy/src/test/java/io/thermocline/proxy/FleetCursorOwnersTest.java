package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.auth.UsersFile;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.authentication.LoginThrottle;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A cursor belongs to the user that opened it on every replica of the fleet: a getMore or killCursors
 * forwarded by a peer runs as the peer's client, so another user gets 13 there too, as on one mongod.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FleetCursorOwnersTest {
    private MongoServer archive;
    private ProxyFleet fleet;
    private ProxyServer a;
    private ProxyServer b;

    @BeforeEach
    void start() throws Exception {
        archive = new MongoServer(new MemoryBackend());
        archive.bind("127.0.0.1", 0);
        fleet = new ProxyFleet("mongodb://127.0.0.1:" + archive.getLocalAddress().getPort(), 12);
        Path users = Files.createTempFile("thermocline-users", ".yaml");
        Files.writeString(users, SecuredProxy.USERS);
        users.toFile().deleteOnExit();
        ProxySecurity security = new ProxySecurity(ProxySecurity.Mode.REQUIRED, new UsersFile(users), LoginThrottle.off(), ClientTls.disabled());
        Path secret = ProxyFleet.secretFile("fleet-secret-of-the-owners-test-0123456789");
        a = fleet.startReplica(secret, security);
        b = fleet.startReplica(secret, security);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> fleet.running()
                .forEach(p -> assertThat(p.fleet().orElseThrow().live()).hasSize(2)));
        try (MongoClient alice = client(a, "alice", "alice-pw")) {
            alice.getDatabase("shop").getCollection("reports")
                    .insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
        }
    }

    @AfterEach
    void stop() {
        fleet.close();
        archive.shutdownNow();
    }

    @Test
    void anotherUsersGetMoreAndKillCursorsOnAnotherReplicaGet13AndTheCursorStaysItsCreators() {
        try (MongoClient aliceOnA = client(a, "alice", "alice-pw"); MongoClient aliceOnB = client(b, "alice", "alice-pw");
             MongoClient reporterOnB = client(b, "reporter", "reporter-pw")) {
            long id = aliceOnA.getDatabase("shop").runCommand(new Document("find", "reports").append("batchSize", 2))
                    .get("cursor", Document.class).getLong("id");
            assertThatThrownBy(() -> reporterOnB.getDatabase("shop").runCommand(getMore(id)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(13));
            assertThatThrownBy(() -> reporterOnB.getDatabase("shop").runCommand(
                    new Document("killCursors", "reports").append("cursors", List.of(id))))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(13));
            Document next = aliceOnB.getDatabase("shop").runCommand(getMore(id));
            assertThat(next.get("cursor", Document.class).getList("nextBatch", Document.class)).hasSize(2);
            Document killed = aliceOnB.getDatabase("shop").runCommand(new Document("killCursors", "reports").append("cursors", List.of(id)));
            assertThat(killed.getList("cursorsKilled", Long.class)).containsExactly(id);
        }
    }

    private static Document getMore(long id) {
        return new Document("getMore", id).append("collection", "reports").append("batchSize", 2);
    }

    private static MongoClient client(ProxyServer proxy, String user, String password) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(ProxyFleet.uri(proxy) + "/?serverSelectionTimeoutMS=5000&retryWrites=false"))
                .credential(MongoCredential.createCredential(user, "admin", password.toCharArray())).build());
    }
}
