package io.thermocline.proxy.topology;

import com.mongodb.ConnectionString;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.Member;
import io.thermocline.proxy.backend.BackendConnector;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Member optimes between heartbeats: with a heartbeat far longer than the test, the monitor still learns
 * each secondary's applied optime from the primary's replSetGetStatus, and never credits a member with
 * more than it applied.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TierMonitorOptimesTest {
    private static final Duration HEARTBEAT = Duration.ofSeconds(60); // far past the awaits below, which allow a loaded machine 20 s

    private EmbeddedReplicaSet rs;
    private EventLoopGroup group;
    private TierMonitor monitor;

    @BeforeEach
    void start() {
        rs = EmbeddedReplicaSet.builder().members(3).build().start();
        group = new NioEventLoopGroup(1);
        BackendConnector connector = new BackendConnector(group, NioSocketChannel.class, 48_000_000, Duration.ofSeconds(5));
        monitor = new TierMonitor(Tier.ARCHIVE, new ConnectionString(rs.connectionString()), connector, group, HEARTBEAT,
                Duration.ofMillis(50), c -> CompletableFuture.completedFuture(null), new TierMonitor.Listener() {
                    @Override
                    public void memberChanged(Tier tier, MemberDescription before, MemberDescription after) {
                    }

                    @Override
                    public void clusterTimeSeen(Tier tier, BsonDocument clusterTime) {
                    }
                });
        monitor.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> monitor.topology().members().values().stream()
                .filter(m -> m.role() == MemberRole.SECONDARY).count() == 2);
    }

    @AfterEach
    void stop() {
        monitor.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        rs.close();
    }

    @Test
    void secondariesOptimesFollowTheirReplicationWithinMillisecondsNotAtTheNextHeartbeat() {
        BsonTimestamp written = write("first");
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            for (Member s : rs.secondaries()) {
                assertThat(described(s).applied(written)).as(s.host() + " " + described(s).appliedOpTime()).isTrue();
            }
        });
    }

    @Test
    void aPausedSecondaryIsNeverCreditedWithWritesItHasNotApplied() throws Exception {
        Member paused = rs.secondaries().get(0);
        Member running = rs.secondaries().get(1);
        rs.pauseReplication(paused);
        BsonTimestamp written = write("while paused");
        await().atMost(Duration.ofSeconds(20)).until(() -> described(running).applied(written));
        Thread.sleep(500); // ten polls
        assertThat(described(paused).applied(written)).as("paused member at " + described(paused).appliedOpTime()).isFalse();
        rs.resumeReplication(paused);
        await().atMost(Duration.ofSeconds(20)).until(() -> described(paused).applied(written));
    }

    private MemberDescription described(Member m) {
        return monitor.topology().members().get(new ServerAddress(m.host()));
    }

    private BsonTimestamp write(String value) {
        try (MongoClient client = MongoClients.create(rs.connectionString())) {
            client.getDatabase("app").getCollection("items").insertOne(new Document("v", value));
        }
        return rs.lastOperationTime();
    }
}
