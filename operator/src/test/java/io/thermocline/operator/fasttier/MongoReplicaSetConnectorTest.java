package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.operator.credentials.FastTierUser;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class MongoReplicaSetConnectorTest {

    @Test
    void unreachableMembersLeaveTheReplicaSetConvergingWithoutSecrets() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        String host = "127.0.0.1:" + port;
        ReplicaSetTarget target = new ReplicaSetTarget(
                "rs",
                List.of(host),
                List.of(host),
                Set.of(),
                "7.0.14",
                false,
                "root",
                "rootpw",
                List.of(new FastTierUser(
                        "tc", "tcpw", "c-users", List.of("readWrite@thermocline"), List.of(), List.of())));
        ReplicaSetState state = new ReplicaSetSteps(new MongoReplicaSetConnector(Duration.ofMillis(300))).next(target);
        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("MembersUnreachable");
            assertThat(c.message()).doesNotContain("rootpw");
        });
        assertThat(target.toString()).doesNotContain("rootpw").doesNotContain("tcpw");
    }

    /** The role is rewritten only when its privileges changed: every updateRole is a replicated write and empties user caches. */
    @Test
    void aRoleIsRewrittenOnlyWhenItsPrivilegesDiffer() {
        org.bson.Document orders = new org.bson.Document(
                        "resource", new org.bson.Document("db", "shop").append("collection", "orders"))
                .append("actions", List.of("find", "insert", "update"));
        org.bson.Document sameShuffled = new org.bson.Document("actions", List.of("update", "find", "insert"))
                .append("resource", new org.bson.Document("collection", "orders").append("db", "shop"));
        org.bson.Document users = new org.bson.Document(
                        "resource", new org.bson.Document("db", "shop").append("collection", "users"))
                .append("actions", List.of("find", "insert", "update"));
        org.bson.Document fewerActions = new org.bson.Document(
                        "resource", new org.bson.Document("db", "shop").append("collection", "orders"))
                .append("actions", List.of("find"));

        assertThat(MongoReplicaSetConnector.samePrivileges(List.of(sameShuffled), List.of(orders)))
                .isTrue();
        assertThat(MongoReplicaSetConnector.samePrivileges(List.of(orders), List.of(orders, users)))
                .as("a collection added")
                .isFalse();
        assertThat(MongoReplicaSetConnector.samePrivileges(List.of(orders, users), List.of(orders)))
                .as("a collection removed")
                .isFalse();
        assertThat(MongoReplicaSetConnector.samePrivileges(List.of(fewerActions), List.of(orders)))
                .as("actions changed")
                .isFalse();
        assertThat(MongoReplicaSetConnector.samePrivileges(null, List.of(orders)))
                .isFalse();
    }
}
