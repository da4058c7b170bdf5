package io.thermocline.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import com.mongodb.event.ServerMonitorListener;
import io.thermocline.config.ConfigLoader;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ClientPort;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A client port opened before the proxy (issue 44 item 5): clients are answered as a starting mongod answers, drivers
 * wait, and the proxy that takes the port over serves them.
 */
class ClientPortTest {

    @Test
    void aDriverConnectedWhileStartingGetsItsFirstOperationAnsweredOnceTheProxyServes() throws Exception {
        List<Throwable> heartbeatFailures = new CopyOnWriteArrayList<>();
        try (ClientPort port = ClientPort.bind("127.0.0.1", 0, "auto");
                EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder()
                        .name("archive")
                        .members(1)
                        .build()
                        .start();
                MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(
                                "mongodb://127.0.0.1:" + port.address().getPort() + "/"))
                        // longer than any start on a loaded machine: the driver must wait, not give up
                        .applyToClusterSettings(c -> c.serverSelectionTimeout(3, TimeUnit.MINUTES))
                        .applyToServerSettings(s -> s.addServerMonitorListener(new ServerMonitorListener() {
                            @Override
                            public void serverHeartbeatFailed(ServerHeartbeatFailedEvent event) {
                                heartbeatFailures.add(event.getThrowable());
                            }
                        }))
                        .build())) {
            port.stage("starting the archive");
            MongoCollection<Document> notes = client.getDatabase("app").getCollection("notes");
            CompletableFuture<Void> firstInsert =
                    CompletableFuture.runAsync(() -> notes.insertOne(new Document("_id", "while-starting")));
            // the driver's monitor was answered by the starting port, more than once: it waits and checks again
            await().atMost(Duration.ofMinutes(1))
                    .until(() -> heartbeatFailures.stream()
                                    .filter(e -> String.valueOf(e.getMessage()).contains("13436")
                                            && e.getMessage()
                                                    .contains("Thermocline is starting (starting the archive)"))
                                    .count()
                            >= 2);
            assertThat(firstInsert).as("no server to select while starting").isNotDone();

            try (ProxyServer proxy = ProxyServer.create(
                            ConfigLoader.parse(
                                    "tiers:\n  archive:\n    uri: '" + archive.connectionString() + "'\n"
                                            + "proxy:\n  httpHost: 127.0.0.1\n  httpPort: 0\nauth:\n  mode: disabled\n",
                                    Map.of()),
                            port)
                    .start()) {
                firstInsert.get(3, TimeUnit.MINUTES); // no error: the driver's server selection waited
                assertThat(notes.find().first()).isEqualTo(new Document("_id", "while-starting"));
                assertThat(proxy.port()).isEqualTo(port.address().getPort());
            }
        }
    }

    @Test
    void commandsWhileStartingGetTheRetryableStartingErrorAndTheTakeoverClosesTheirConnections() throws Exception {
        try (ClientPort port = ClientPort.bind("127.0.0.1", 0, "auto");
                EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder()
                        .name("archive")
                        .members(1)
                        .build()
                        .start();
                WireClient raw = new WireClient(port.address().getPort())) {
            port.stage("loading sample orders");
            BsonDocument hello =
                    raw.command(BsonDocument.parse("{hello: 1, $db: 'admin'}")).body();
            assertThat(hello.getNumber("ok").intValue()).isZero();
            assertThat(hello.getInt32("code").getValue()).isEqualTo(13436);
            assertThat(hello.getString("codeName").getValue()).isEqualTo("NotPrimaryOrSecondary");
            assertThat(hello.getString("errmsg").getValue()).contains("loading sample orders");

            BsonDocument find = raw.command(BsonDocument.parse("{find: 'notes', $db: 'app'}"))
                    .body();
            assertThat(find.getInt32("code").getValue()).isEqualTo(13436);
            assertThat(find.containsKey("errorLabels"))
                    .as("a read carries no label")
                    .isFalse();

            BsonDocument insert = raw.command(BsonDocument.parse("{insert: 'notes', documents: [{_id: 1}],"
                            + " lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}}, txnNumber: {$numberLong: '1'},"
                            + " $db: 'app'}"))
                    .body();
            assertThat(insert.getInt32("code").getValue()).isEqualTo(13436);
            assertThat(insert.getArray("errorLabels").getValues())
                    .extracting(v -> v.asString().getValue())
                    .containsExactly("RetryableWriteError");

            // the legacy handshake (OP_QUERY isMaster) is refused the same way
            raw.send(
                    new OpQuery(
                            raw.nextRequestId(),
                            0,
                            0,
                            "admin.$cmd",
                            0,
                            -1,
                            OpMsg.raw(BsonDocument.parse("{isMaster: 1}")),
                            null),
                    null);
            RawBsonDocument legacy =
                    ((OpReply) raw.receive().message()).documents().get(0);
            assertThat(legacy.getInt32("code").getValue()).isEqualTo(13436);

            try (ProxyServer proxy = ProxyServer.create(
                            ConfigLoader.parse(
                                    "tiers:\n  archive:\n    uri: '" + archive.connectionString() + "'\n"
                                            + "proxy:\n  httpHost: 127.0.0.1\n  httpPort: 0\nauth:\n  mode: disabled\n",
                                    Map.of()),
                            port)
                    .start()) {
                // a connection of the starting port cannot be continued by the proxy: it is closed, a new one is served
                assertThat(raw.closedByPeer()).isTrue();
                try (WireClient served = new WireClient(proxy.port())) {
                    BsonDocument ping = served.command(BsonDocument.parse("{ping: 1, $db: 'admin'}"))
                            .body();
                    assertThat(ping.getNumber("ok").intValue()).isEqualTo(1);
                }
            }
        }
    }
}
