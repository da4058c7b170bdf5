package io.thermocline.proxy;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** With two tiers the proxy advertises what both accept, and is ready only when both have a primary. */
class TwoTierHandshakeTest {

    @Test
    void advertisesTheLowerOfBothTiersAndNeedsBothForReadiness() throws Exception {
        MongoServer fast = new MongoServer(new MemoryBackend());
        fast.bind("127.0.0.1", 0);
        int fastPort = fast.getLocalAddress().getPort();
        try (EmbeddedReplicaSet archive = EmbeddedReplicaSet.startSingle();
             ProxyFixture fixture = ProxyFixture.inFrontOf(archive.connectionString(), "mongodb://127.0.0.1:" + fastPort, "")) {
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy().readiness().ready());
            try (WireClient c = new WireClient(fixture.port())) {
                OpMsg hello = c.command(BsonDocument.parse("{hello: 1, $db: 'admin'}"));
                // archive: wire 17 with sessions; fast (mongo-java-server): wire 8 without sessions.
                assertThat(hello.body().getNumber("maxWireVersion").intValue()).isEqualTo(8);
                assertThat(hello.body().containsKey("logicalSessionTimeoutMinutes")).isFalse();
            }
            fast.shutdownNow();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(fixture.proxy().readiness().ready()).isFalse();
                assertThat(fixture.proxy().readiness().reason()).contains("fast tier");
            });
        } finally {
            fast.shutdownNow();
        }
    }
}
