package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.Member;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.Tier;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A primary that crashes: the proxy follows the election and retryable writes go on. */
class PrimaryCrashTest {

    @Test
    void writesContinueThroughTheElectionAfterAPrimaryCrash() {
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().members(3).build().start();
             ProxyFixture fixture = ProxyFixture.inFrontOf(rs.connectionString(), "");
             MongoClient client = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(fixture.uri()))
                     .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
            MongoCollection<Document> coll = client.getDatabase("app").getCollection("crash");
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy().topology(Tier.ARCHIVE).primary() != null);
            for (int i = 0; i < 20; i++) {
                coll.insertOne(new Document("_id", i));
            }
            Member old = rs.primary();
            rs.kill(old);
            for (int i = 20; i < 40; i++) {
                coll.insertOne(new Document("_id", i));
            }
            assertThat(fixture.proxy().topology(Tier.ARCHIVE).primary().getPort()).isNotEqualTo(old.port());
            assertThat(fixture.proxy().topology(Tier.ARCHIVE).members().values().stream()
                    .filter(m -> m.address().getPort() == old.port()).findFirst().orElseThrow().role())
                    .isEqualTo(MemberRole.UNKNOWN);
            assertThat(coll.countDocuments()).isEqualTo(40);
        }
    }
}
