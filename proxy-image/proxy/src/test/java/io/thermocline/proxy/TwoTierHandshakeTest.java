package io.thermocline.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.wire.OpMsg;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * With two tiers the proxy advertises what both accept; it becomes ready once both had a primary, and a fast tier that
 * loses its primary afterwards leaves it ready, degraded.
 */
class TwoTierHandshakeTest {

    @Test
    void aFastTierThatNeverAnsweredKeepsTheProxyOutOfServiceAndSaysWhy() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = socket.getLocalPort();
        }
        try (EmbeddedReplicaSet archive = EmbeddedReplicaSet.startSingle();
                ProxyFixture fixture =
                        ProxyFixture.inFrontOf(archive.connectionString(), "mongodb://127.0.0.1:" + closed, "")) {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(fixture.proxy().readiness().reason())
                        .contains("no primary known for the fast tier (127.0.0.1:" + closed)
                        .doesNotContain("not checked yet");
                assertThat(fixture.proxy().readiness().ready()).isFalse();
            });
        }
    }

    @Test
    void advertisesTheLowerOfBothTiersAndStaysReadyDegradedWhenTheFastTierLosesItsPrimary() throws Exception {
        MongoServer fast = new MongoServer(new MemoryBackend());
        fast.bind("127.0.0.1", 0);
        int fastPort = fast.getLocalAddress().getPort();
        try (EmbeddedReplicaSet archive = EmbeddedReplicaSet.startSingle();
                ProxyFixture fixture =
                        ProxyFixture.inFrontOf(archive.connectionString(), "mongodb://127.0.0.1:" + fastPort, "")) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> fixture.proxy().readiness().ready());
            try (WireClient c = new WireClient(fixture.port())) {
                OpMsg hello = c.command(BsonDocument.parse("{hello: 1, $db: 'admin'}"));
                // archive: wire 17 with sessions; fast (mongo-java-server): wire 8 without sessions.
                assertThat(hello.body().getNumber("maxWireVersion").intValue()).isEqualTo(8);
                assertThat(hello.body().containsKey("logicalSessionTimeoutMinutes"))
                        .isFalse();
            }
            // the fast tier served, then has no primary (an election, an outage): every replica sees it at once, and
            // taking them all out of service would refuse every connection; ready, degraded, saying why (issue 42 item
            // 3)
            fast.shutdownNow();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(fixture.proxy().readiness().reason())
                        .contains("degraded: no primary known for the fast tier");
                assertThat(fixture.proxy().readiness().ready()).isTrue();
            });
        } finally {
            fast.shutdownNow();
        }
    }
}
