package io.thermocline.proxy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.proxy.server.ProxyServer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * getMore's {@code collection} must name the cursor's namespace, as mongod checks it: 13 with mongod's
 * message otherwise, and the cursor stays open for the right getMore. On the replica that opened the
 * cursor and on one that forwards the getMore to it; mongod's parse errors for a missing, mistyped or
 * empty {@code collection} come first. (The tiered stack's cursors: {@code tiered.TieredGetMoreNamespaceTest}.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GetMoreNamespaceTest {
    private MongoServer archive;
    private ProxyFleet fleet;

    @BeforeEach
    void start() {
        archive = new MongoServer(new MemoryBackend());
        archive.bind("127.0.0.1", 0);
        InetSocketAddress a = archive.getLocalAddress();
        fleet = new ProxyFleet("mongodb://127.0.0.1:" + a.getPort(), 12);
        ProxyServer first = fleet.startReplica();
        try (MongoClient client = MongoClients.create(ProxyFleet.uri(first))) {
            client.getDatabase("app").getCollection("items")
                    .insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i)).toList());
            client.getDatabase("app").getCollection("other").insertOne(new Document("_id", 1));
        }
    }

    @AfterEach
    void stop() {
        fleet.close();
        archive.shutdownNow();
    }

    static BsonDocument getMore(long id, String db, BsonValue collection) {
        BsonDocument cmd = new BsonDocument("getMore", new BsonInt64(id));
        if (collection != null) {
            cmd.append("collection", collection);
        }
        return cmd.append("batchSize", new BsonInt32(2)).append("$db", new BsonString(db));
    }

    private static void assertError(BsonDocument reply, int code, String codeName, String message) {
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isZero();
        assertThat(reply.getInt32("code").getValue()).as(reply.toJson()).isEqualTo(code);
        assertThat(reply.getString("codeName").getValue()).isEqualTo(codeName);
        assertThat(reply.getString("errmsg").getValue()).isEqualTo(message);
    }

    /** A wrong collection, then a wrong database, then the right namespace: the cursor survives the refusals. */
    static void assertNamespaceChecked(WireClient opener, WireClient continuer, String db, String collection) throws Exception {
        BsonDocument first = opener.command(new BsonDocument("find", new BsonString(collection))
                .append("batchSize", new BsonInt32(2)).append("$db", new BsonString(db))).body();
        long id = first.getDocument("cursor").getInt64("id").getValue();
        assertThat(id).as(first.toJson()).isNotZero();
        String ns = db + "." + collection;
        assertError(continuer.command(getMore(id, db, new BsonString("other"))).body(), 13, "Unauthorized",
                "Requested getMore on namespace '" + db + ".other', but cursor belongs to a different namespace " + ns);
        assertError(continuer.command(getMore(id, "elsewhere", new BsonString(collection))).body(), 13, "Unauthorized",
                "Requested getMore on namespace 'elsewhere." + collection + "', but cursor belongs to a different namespace " + ns);
        BsonDocument next = continuer.command(getMore(id, db, new BsonString(collection))).body();
        assertThat(next.getNumber("ok").intValue()).as(next.toJson()).isEqualTo(1);
        assertThat(next.getDocument("cursor").getArray("nextBatch")).hasSize(2);
    }

    @Test
    void aGetMoreOnAnotherNamespaceIsRefusedAsMongodRefusesIt() throws Exception {
        ProxyServer a = fleet.running().get(0);
        try (WireClient client = new WireClient(a.port())) {
            assertNamespaceChecked(client, client, "app", "items");
        }
    }

    @Test
    void theOwnerChecksTheNamespaceOfAForwardedGetMore() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer b = fleet.startReplica();
        await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> fleet.running()
                .forEach(p -> assertThat(p.fleet().orElseThrow().live()).hasSize(2)));
        try (WireClient onA = new WireClient(a.port()); WireClient onB = new WireClient(b.port())) {
            assertNamespaceChecked(onA, onB, "app", "items");
        }
    }

    @Test
    void aMissingMistypedOrEmptyCollectionGetsMongodsParseErrors() throws Exception {
        ProxyServer a = fleet.running().get(0);
        try (WireClient client = new WireClient(a.port())) {
            long id = client.command(BsonDocument.parse("{find: 'items', batchSize: 2, $db: 'app'}")).body()
                    .getDocument("cursor").getInt64("id").getValue();
            assertError(client.command(getMore(id, "app", null)).body(), 40414, "Location40414",
                    "BSON field 'getMore.collection' is missing but a required field");
            assertError(client.command(getMore(id, "app", new BsonInt32(5))).body(), 14, "TypeMismatch",
                    "BSON field 'getMore.collection' is the wrong type 'int', expected type 'string'");
            assertError(client.command(getMore(id, "app", new BsonDocument())).body(), 14, "TypeMismatch",
                    "BSON field 'getMore.collection' is the wrong type 'object', expected type 'string'");
            assertError(client.command(getMore(id, "app", new BsonString(""))).body(), 73, "InvalidNamespace",
                    "Collection names cannot be empty");
            BsonDocument next = client.command(getMore(id, "app", new BsonString("items"))).body();
            assertThat(next.getNumber("ok").intValue()).as(next.toJson()).isEqualTo(1);
        }
    }
}
