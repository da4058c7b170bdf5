package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerDescription;
import io.thermocline.embedded.member.Member;
import java.time.Duration;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TopologyDiscoveryTest {
    private static EmbeddedReplicaSet rs;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().name("disc").members(3).build().start();
    }

    @AfterAll
    static void stop() {
        rs.close();
    }

    @Test
    void driverDiscoversEveryMemberAndThePrimary() {
        try (MongoClient client = MongoClients.create(rs.connectionString())) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                var cluster = client.getClusterDescription();
                assertThat(cluster.getType()).isEqualTo(ClusterType.REPLICA_SET);
                assertThat(cluster.getServerDescriptions()).hasSize(3).allMatch(ServerDescription::isOk);
                assertThat(cluster.getServerDescriptions()).filteredOn(ServerDescription::isPrimary)
                    .extracting(s -> s.getAddress().toString()).containsExactly(rs.primary().host());
                assertThat(cluster.getServerDescriptions()).filteredOn(ServerDescription::isSecondary).hasSize(2);
                assertThat(cluster.getServerDescriptions()).allMatch(s -> "disc".equals(s.getSetName()));
            });
        }
    }

    @Test
    void helloAnswersAsAReplicaSetMember() {
        try (MongoClient client = MongoClients.create(rs.connectionString())) {
            Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
            assertThat(hello.getString("setName")).isEqualTo("disc");
            assertThat(hello.getList("hosts", String.class)).containsExactlyElementsOf(
                rs.members().stream().map(m -> m.host()).toList());
            assertThat(hello.getBoolean("isWritablePrimary")).isTrue();
            assertThat(hello.getString("primary")).isEqualTo(rs.primary().host());
            assertThat(hello.getString("me")).isEqualTo(rs.primary().host());
            assertThat(hello.get("topologyVersion", Document.class)).containsKeys("processId", "counter");
            assertThat(hello.get("lastWrite", Document.class).get("opTime", Document.class)).containsKeys("ts", "t");
            assertThat(hello.getInteger("logicalSessionTimeoutMinutes")).isEqualTo(30);
            assertThat(hello.getInteger("maxWireVersion")).isGreaterThanOrEqualTo(9);
            assertThat(hello.get("electionId")).isNotNull();
        }
    }

    @Test
    void secondaryAnswersLegacyIsMasterWithThePrimary() {
        Member secondary = rs.secondaries().get(0);
        try (MongoClient client = MongoClients.create(secondary.directConnectionString())) {
            Document isMaster = client.getDatabase("admin").runCommand(new Document("isMaster", 1));
            assertThat(isMaster.getBoolean("ismaster")).isFalse();
            assertThat(isMaster.getBoolean("secondary")).isTrue();
            assertThat(isMaster.getString("primary")).isEqualTo(rs.primary().host());
            assertThat(isMaster.getString("me")).isEqualTo(secondary.host());
            assertThat(isMaster.containsKey("electionId")).isFalse();
        }
    }

    @Test
    void compressedConnectionsWorkWithEveryCompressor() {
        for (String compressor : List.of("snappy", "zlib", "zstd")) {
            try (MongoClient client = MongoClients.create(rs.connectionString() + "&compressors=" + compressor)) {
                var coll = client.getDatabase("disc").getCollection(compressor);
                coll.insertOne(new Document("_id", 1).append("text", "x".repeat(2_000)));
                assertThat(coll.find().first().getString("text")).hasSize(2_000);
            }
        }
    }

    @Test
    void buildInfoAndServerStatusReportTheImplementedVersionAndReplicaSet() {
        try (MongoClient client = MongoClients.create(rs.connectionString())) {
            Document buildInfo = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
            Document status = client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            assertThat(buildInfo.getString("version")).isEqualTo("6.0.0");
            assertThat(status.getString("version")).isEqualTo("6.0.0");
            assertThat(status.get("repl", Document.class).getString("setName")).isEqualTo("disc");
            assertThat(status.get("repl", Document.class).getBoolean("isWritablePrimary")).isTrue();
        }
    }

    @Test
    void replSetGetStatusListsMembersWithTheirStates() {
        try (MongoClient client = MongoClients.create(rs.connectionString())) {
            Document status = client.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1));
            assertThat(status.getString("set")).isEqualTo("disc");
            List<Document> members = status.getList("members", Document.class);
            assertThat(members).extracting(m -> m.getString("stateStr")).containsExactlyInAnyOrder("PRIMARY", "SECONDARY", "SECONDARY");
        }
    }
}
