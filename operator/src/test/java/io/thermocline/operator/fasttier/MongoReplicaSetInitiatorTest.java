package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MongoReplicaSetInitiatorTest {

    @Test
    void unreachableMembersLeaveTheReplicaSetConvergingWithoutSecrets() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        ReplicaSetTarget target = new ReplicaSetTarget("rs", List.of("127.0.0.1:" + port), "root", "rootpw", "tc", "tcpw");
        ReplicaSetState state = new MongoReplicaSetInitiator(Duration.ofMillis(300)).ensure(target);
        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("MembersUnreachable");
            assertThat(c.message()).doesNotContain("rootpw");
        });
        assertThat(target.toString()).doesNotContain("rootpw").doesNotContain("tcpw");
    }
}
