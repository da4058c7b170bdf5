package io.thermocline.proxy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * killCursors reaches only cursors of the namespace it names: another namespace's cursor is reported in
 * {@code cursorsNotFound} and stays open (mongos 5.0's rule, which keys cursors by namespace), on the
 * replica holding it and through a peer; and only its creator (or killAnyCursor) may kill it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KillCursorsNamespaceTest {

    @Test
    void aCursorOfAnotherNamespaceIsNotFoundAndStaysOpenOnTheOwnerAndThroughAPeer() {
        try (EmbeddedReplicaSet archive = EmbeddedReplicaSet.startSingle(); ProxyFleet fleet = new ProxyFleet(archive.connectionString(), 12)) {
            ProxyServer a = fleet.startReplica();
            ProxyServer b = fleet.startReplica();
            fleet.awaitLive(2);
            try (MongoClient onA = MongoClients.create(ProxyFleet.uri(a)); MongoClient onB = MongoClients.create(ProxyFleet.uri(b))) {
                MongoDatabase shop = onA.getDatabase("shop");
                shop.getCollection("reports").insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
                for (MongoClient killer : new MongoClient[] {onA, onB}) {
                    long id = open(shop);
                    Document elsewhere = killer.getDatabase("shop").runCommand(kill("orders", id));
                    assertThat(elsewhere.getList("cursorsNotFound", Long.class)).as(elsewhere.toJson()).containsExactly(id);
                    assertThat(elsewhere.getList("cursorsKilled", Long.class)).isEmpty();
                    Document otherDb = killer.getDatabase("crm").runCommand(kill("reports", id));
                    assertThat(otherDb.getList("cursorsNotFound", Long.class)).as(otherDb.toJson()).containsExactly(id);
                    assertThat(shop.runCommand(getMore(id)).get("cursor", Document.class).getList("nextBatch", Document.class)).hasSize(2);
                    Document killed = killer.getDatabase("shop").runCommand(kill("reports", id));
                    assertThat(killed.getList("cursorsKilled", Long.class)).as(killed.toJson()).containsExactly(id);
                    assertThatThrownBy(() -> shop.runCommand(getMore(id)))
                            .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(43));
                }
            }
        }
    }

    @Test
    void anotherUsersCursorNamedInAnotherNamespaceIsNotFoundAndInItsOwnRefused() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start(); MongoClient alice = secured.client("alice", "alice-pw");
             MongoClient reporter = secured.client("reporter", "reporter-pw")) {
            alice.getDatabase("shop").getCollection("reports")
                    .insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
            long id = open(alice.getDatabase("shop"));
            Document elsewhere = reporter.getDatabase("shop").runCommand(kill("orders", id));
            assertThat(elsewhere.getList("cursorsNotFound", Long.class)).as(elsewhere.toJson()).containsExactly(id);
            assertThatThrownBy(() -> reporter.getDatabase("shop").runCommand(kill("reports", id)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(13);
                        assertThat(e.getErrorMessage()).isEqualTo("not authorized to kill cursor on shop.reports");
                    });
            assertThat(alice.getDatabase("shop").runCommand(getMore(id)).get("cursor", Document.class)
                    .getList("nextBatch", Document.class)).hasSize(2);
        }
    }

    private static long open(MongoDatabase db) {
        Document first = db.runCommand(new Document("find", "reports").append("batchSize", 2));
        long id = first.get("cursor", Document.class).getLong("id");
        assertThat(id).as(first.toJson()).isNotZero();
        return id;
    }

    private static Document kill(String collection, long id) {
        return new Document("killCursors", collection).append("cursors", List.of(id));
    }

    private static Document getMore(long id) {
        return new Document("getMore", id).append("collection", "reports").append("batchSize", 2);
    }

}
