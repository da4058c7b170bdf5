package io.thermocline.proxy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.sessions.Sessions;
import io.thermocline.proxy.topology.Tier;
import org.bson.BsonDocument;
import org.bson.Document;
import org.slf4j.LoggerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The load-balancers spec: a load-balanced connection's transaction is pinned to it, and closing the
 * connection aborts the transaction (behind a balancer, nobody else can continue it).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LoadBalancedTransactionsTest {
    private static final String LSID = "{id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAg==', subType: '04'}}}";

    @Test
    void closingALoadBalancedConnectionAbortsItsOpenTransaction() throws Exception {
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        Logger sessions = (Logger) LoggerFactory.getLogger(Sessions.class);
        ch.qos.logback.classic.Level levelBefore = sessions.getLevel();
        sessions.setLevel(ch.qos.logback.classic.Level.INFO);
        sessions.addAppender(logs);
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().members(1).build().start();
             ProxyFixture fixture = ProxyFixture.inFrontOf("mongodb://" + rs.primary().host() + "/?replicaSet=" + rs.name(), "")) {
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy().topology(Tier.ARCHIVE).primary() != null);
            try (MongoClient setup = MongoClients.create(fixture.uri())) {
                setup.getDatabase("lb").createCollection("items");
            }
            try (WireClient lb = new WireClient(fixture.port())) {
                lb.command(BsonDocument.parse("{hello: 1, loadBalanced: true, $db: 'admin'}"));
                BsonDocument inserted = lb.command(BsonDocument.parse("{insert: 'items', documents: [{_id: 1}], lsid: " + LSID
                        + ", txnNumber: {$numberLong: '1'}, startTransaction: true, autocommit: false, $db: 'lb'}")).body();
                assertThat(inserted.getDouble("ok").getValue()).as(inserted.toJson()).isEqualTo(1.0);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy().inFlight() == 0);
            // the close reached the proxy and its abort the member (a sleep would race a loaded machine)
            await().atMost(Duration.ofSeconds(60)).until(() -> List.copyOf(logs.list).stream()
                    .anyMatch(e -> e.getFormattedMessage().contains("event=load_balanced_transaction_aborted")));
            try (WireClient other = new WireClient(fixture.port())) {
                other.command(BsonDocument.parse("{hello: 1, $db: 'admin'}"));
                BsonDocument commit = other.command(BsonDocument.parse("{commitTransaction: 1, lsid: " + LSID
                        + ", txnNumber: {$numberLong: '1'}, autocommit: false, $db: 'admin'}")).body();
                assertThat(commit.getDouble("ok").getValue()).as(commit.toJson()).isZero();
                assertThat(commit.getInt32("code").getValue()).as(commit.toJson()).isEqualTo(251); // NoSuchTransaction
            }
            try (MongoClient check = MongoClients.create(fixture.uri())) {
                assertThat(check.getDatabase("lb").getCollection("items").find(new Document("_id", 1)).first()).isNull();
            }
        } finally {
            sessions.detachAppender(logs);
            sessions.setLevel(levelBefore);
        }
    }
}
