package io.thermocline.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.wire.OpMsg;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Limits, outages, health and metrics. */
class ResilienceTest {

    private static MongoClient client(String uri, int selectionSeconds) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionSeconds, TimeUnit.SECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(2, TimeUnit.SECONDS))
                .build());
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void connectionsPastTheLimitGetAClearErrorAndOthersKeepWorking() throws Exception {
        try (ProxyFixture fixture =
                ProxyFixture.start("  maxClientConnections: 3\n  maxMessageSizeBytes: 20000000\n", Map.of())) {
            List<WireClient> held = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    WireClient c = new WireClient(fixture.port());
                    assertThat(c.command(BsonDocument.parse("{ping: 1, $db: 'admin'}"))
                                    .body()
                                    .getNumber("ok")
                                    .intValue())
                            .isEqualTo(1);
                    held.add(c);
                }
                OpMsg hello = held.get(0).command(BsonDocument.parse("{hello: 1, $db: 'admin'}"));
                assertThat(hello.body().getNumber("maxMessageSizeBytes").intValue())
                        .isEqualTo(20_000_000);
                try (WireClient extra = new WireClient(fixture.port())) {
                    OpMsg reply = extra.command(BsonDocument.parse("{hello: 1, $db: 'admin'}"));
                    assertThat(reply.body().getNumber("ok").intValue()).isZero();
                    assertThat(reply.body().getString("errmsg").getValue())
                            .contains("connection limit reached", "proxy.maxClientConnections", "3");
                    assertThat(extra.closedByPeer()).isTrue();
                }
                try (MongoClient driver = client(fixture.uri(), 2)) {
                    assertThatThrownBy(() ->
                                    driver.getDatabase("a").getCollection("b").countDocuments())
                            .isInstanceOf(MongoTimeoutException.class)
                            .hasMessageContaining("connection limit reached");
                }
                assertThat(held.get(0)
                                .command(BsonDocument.parse("{ping: 1, $db: 'admin'}"))
                                .body()
                                .getNumber("ok")
                                .intValue())
                        .isEqualTo(1);
            } finally {
                for (WireClient c : held) {
                    c.close();
                }
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                try (WireClient again = new WireClient(fixture.port())) {
                    assertThat(again.command(BsonDocument.parse("{ping: 1, $db: 'admin'}"))
                                    .body()
                                    .getNumber("ok")
                                    .intValue())
                            .isEqualTo(1);
                }
            });
        }
    }

    @Test
    void backendDownGivesRetryableErrorsAndTheProxyRecovers() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start();
                MongoClient driver = client(fixture.uri(), 5)) {
            MongoCollection<Document> coll = driver.getDatabase("app").getCollection("outage");
            coll.insertOne(new Document("_id", 1));
            fixture.stopBackend();
            assertThatThrownBy(() -> coll.find().first()).isInstanceOfSatisfying(MongoCommandException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(6);
                assertThat(e.getErrorMessage()).contains("127.0.0.1");
            });
            try (WireClient raw = new WireClient(fixture.port())) {
                OpMsg reply = raw.command(BsonDocument.parse(
                        "{insert: 'outage', documents: [{_id: 2}], lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}},"
                                + " txnNumber: {$numberLong: '1'}, $db: 'app'}"));
                assertThat(reply.body().getNumber("code").intValue()).isEqualTo(6);
                assertThat(reply.body()
                                .getArray("errorLabels")
                                .get(0)
                                .asString()
                                .getValue())
                        .isEqualTo("RetryableWriteError");
            }
            assertThat(get(fixture.proxy().httpPort(), "/health/ready").statusCode())
                    .isEqualTo(503);
            fixture.restartBackend();
            // until the proxy's monitor hears the member again it refuses the insert at once, retryably
            // (HostUnreachable
            // 6, nothing applied): a loaded machine only makes that last longer
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .ignoreExceptionsMatching(
                            e -> e instanceof MongoCommandException refused && refused.getErrorCode() == 6)
                    .untilAsserted(() -> {
                        coll.insertOne(new Document("_id", 3));
                        assertThat(coll.countDocuments()).isEqualTo(1);
                    });
            assertThat(get(fixture.proxy().httpPort(), "/health/ready").statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void metricsAndHealthAreServedOverHttp() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start();
                MongoClient driver = client(fixture.uri(), 5)) {
            driver.getDatabase("app").getCollection("m").insertOne(new Document("x", 1));
            driver.getDatabase("app").getCollection("m").find().first();
            await().atMost(Duration.ofSeconds(30))
                    .until(() ->
                            get(fixture.proxy().httpPort(), "/health/ready").statusCode() == 200);
            assertThat(get(fixture.proxy().httpPort(), "/health/live").statusCode())
                    .isEqualTo(200);
            String metrics = get(fixture.proxy().httpPort(), "/metrics").body();
            assertThat(metrics)
                    .contains(
                            "thermocline_proxy_client_connections ",
                            "thermocline_proxy_commands_total{command=\"insert\",outcome=\"ok\"} 1",
                            "thermocline_proxy_commands_total{command=\"find\",outcome=\"ok\"} 1",
                            "thermocline_proxy_command_duration_seconds_bucket{command=\"find\"",
                            "thermocline_proxy_pool_wait_seconds_bucket{member=\"127.0.0.1:",
                            "thermocline_proxy_pool_connections{member=",
                            "thermocline_proxy_backend_primary_known{tier=\"archive\"} 1");
        }
    }

    @Test
    void poolWaitsAreBoundedAndReported() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start()) {
            // Four concurrent clients share a pool of four connections per member: nobody times out.
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            try (MongoClient driver = client(fixture.uri(), 5)) {
                MongoCollection<Document> coll = driver.getDatabase("app").getCollection("pool");
                for (int t = 0; t < 16; t++) {
                    int base = t * 1000;
                    Thread th = new Thread(() -> {
                        try {
                            for (int i = 0; i < 50; i++) {
                                coll.insertOne(new Document("_id", base + i));
                            }
                        } catch (MongoException e) {
                            failures.add(e);
                        }
                    });
                    threads.add(th);
                    th.start();
                }
                for (Thread th : threads) {
                    th.join();
                }
                assertThat(failures).isEmpty();
                assertThat(coll.countDocuments()).isEqualTo(800);
            }
            String metrics = get(fixture.proxy().httpPort(), "/metrics").body();
            assertThat(metrics)
                    .containsPattern(
                            "thermocline_proxy_pool_connections\\{member=\"127.0.0.1:\\d+\",state=\"open\",tier=\"archive\"\\} [1-4]\\.0");
            assertThat(metrics)
                    .containsPattern(
                            "thermocline_proxy_pool_wait_seconds_count\\{member=\"127.0.0.1:\\d+\",tier=\"archive\"\\} \\d+");
        }
    }
}
