package io.thermocline.proxy;

import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class GracefulShutdownTest {

    @Test
    void shutdownDrainsRequestsInFlightAndTurnsNewOnesAway() throws Exception {
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().members(3).build().start()) {
            ProxyFixture fixture = ProxyFixture.inFrontOf(rs.connectionString(), "");
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy().topology(Tier.ARCHIVE).primary() != null);
            try (WireClient slow = new WireClient(fixture.port()); WireClient other = new WireClient(fixture.port())) {
                assertThat(other.command(BsonDocument.parse("{ping: 1, $db: 'admin'}")).body().getNumber("ok").intValue()).isEqualTo(1);
                rs.secondaries().forEach(rs::pauseReplication);
                // A majority write cannot finish while replication is paused: it stays in flight.
                slow.send(OpMsg.request(slow.nextRequestId(),
                        BsonDocument.parse("{insert: 'drain', documents: [{_id: 1}], writeConcern: {w: 'majority'}, $db: 'app'}")), null);
                await().atMost(Duration.ofSeconds(30)).until(() -> fixture.proxy().inFlight() == 1);
                CompletableFuture<Void> closing = CompletableFuture.runAsync(fixture::close);
                await().atMost(Duration.ofSeconds(30)).until(() -> !fixture.proxy().readiness().ready());
                OpMsg refused = other.command(BsonDocument.parse("{find: 'drain', $db: 'app'}"));
                assertThat(refused.body().getNumber("code").intValue()).isEqualTo(91);
                assertThat(closing).isNotDone();
                rs.secondaries().forEach(rs::resumeReplication);
                OpMsg done = (OpMsg) slow.receive().message();
                assertThat(done.body().getNumber("ok").intValue()).isEqualTo(1);
                assertThat(done.body().getNumber("n").intValue()).isEqualTo(1);
                closing.get(20, TimeUnit.SECONDS);
            }
            assertThatThrownBy(() -> new Socket("127.0.0.1", fixture.port()).close()).isInstanceOf(ConnectException.class);
        }
    }
}
