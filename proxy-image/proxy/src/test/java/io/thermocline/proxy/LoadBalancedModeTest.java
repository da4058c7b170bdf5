package io.thermocline.proxy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.connection.ClusterType;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The Java driver in load-balanced mode, as behind a Kubernetes Service with several proxy replicas. */
class LoadBalancedModeTest {

    @Test
    void loadBalancedDriverWorksAndCursorsDieWithTheirConnection() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start()) {
            try (MongoClient client = MongoClients.create(fixture.uri() + "/?loadBalanced=true")) {
                MongoCollection<Document> coll = client.getDatabase("lb").getCollection("items");
                coll.insertMany(IntStream.range(0, 30).mapToObj(i -> new Document("_id", i)).toList());
                List<Integer> ids = new ArrayList<>();
                try (MongoCursor<Document> cursor = coll.find().batchSize(4).iterator()) {
                    cursor.forEachRemaining(d -> ids.add(d.getInteger("_id")));
                }
                assertThat(ids).hasSize(30);
                assertThat(client.getClusterDescription().getType()).isEqualTo(ClusterType.LOAD_BALANCED);
                MongoCursor<Document> open = coll.find().batchSize(2).iterator();
                open.next();
                assertThat(openCursors(fixture)).isEqualTo(1);
                open.close();
                assertThat(openCursors(fixture)).isZero();
            }
            // A load-balanced cursor belongs to its connection: when the connection closes, it is killed.
            try (WireClient raw = new WireClient(fixture.port())) {
                raw.command(org.bson.BsonDocument.parse("{hello: 1, loadBalanced: true, $db: 'admin'}"));
                raw.command(org.bson.BsonDocument.parse("{find: 'items', batchSize: 2, lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAQ==', subType: '04'}}}, $db: 'lb'}"));
                assertThat(openCursors(fixture)).isEqualTo(1);
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(openCursors(fixture)).isZero());
        }
    }

    private static long openCursors(ProxyFixture fixture) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        fixture.proxy().metrics().writeTo(out);
        return out.toString().lines().filter(l -> l.startsWith("thermocline_proxy_open_cursors "))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst().orElse(-1);
    }
}
