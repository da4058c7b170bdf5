package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.thermocline.proxy.server.ProxyServer;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An archive that stays connected and answers {@code hello} but stalls its reads (issue 40 item 1: a stalled disk, a
 * stuck primary): the proxy's serving probe sees its read unanswered, archive-routed reads are refused at once with the
 * retryable outage error instead of each waiting for the archive, hot reads go on, and once the archive answers again
 * so do archive reads. Before the probe, the archive count waited until the archive let it run.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StalledArchiveTest {

    static final Instant OLD = Instant.now().minus(Duration.ofHours(2));

    /**
     * The proxy under test confirms a stall after 4 s, not the production 10 s ({@code ProxySettings#stallConfirmed}), so
     * the archive needs to stall for 15 s only; 4 s, not less: a healthy archive on a loaded machine has left the probe
     * unanswered past 2 s.
     */
    static final Duration STALL_CONFIRMED = Duration.ofSeconds(4);

    @Test
    void archiveReadsAreRefusedAtOnceWhileTheArchiveStallsAndHotReadsGoOn() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(60), Duration.ofMillis(5))) {
            stack.startFeeder();
            ProxyServer proxy =
                    stack.anotherProxy("stall-test", TieredStack.FOLLOW, s -> s.withStallConfirmed(STALL_CONFIRMED));
            try (MongoClient client =
                    MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true")) {
                MongoCollection<BsonDocument> orders =
                        client.getDatabase("shop").getCollection("orders", BsonDocument.class);
                stack.archiveOrders().insertOne(SessionConsistencyTest.order(1, OLD, "archived"));
                stack.orders().insertOne(SessionConsistencyTest.order(2, Instant.now(), "hot"));
                awaitOutOfService(proxy, false); // a loaded machine may delay the probe's first answers
                assertThat(orders.countDocuments())
                        .as("both tiers, before the stall")
                        .isEqualTo(2);

                var admin = stack.archiveDirect.getDatabase("admin");
                // every read the archive gets from now on waits 15 s before it runs (the probe's is a stall after 4 s);
                // hello, ping and writes are answered
                admin.runCommand(
                        Document.parse(
                                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {blockConnection: true,"
                                        + " blockTimeMS: 15000, failCommands: ['find', 'count', 'aggregate', 'distinct', 'getMore']}}"));
                try {
                    awaitOutOfService(proxy, true);
                    assertThat(orders.find(Filters.eq("_id", 2))
                                    .first()
                                    .getString("state")
                                    .getValue())
                            .as("a hot read, served by the fast tier")
                            .isEqualTo("hot");
                    assertThatThrownBy(orders::countDocuments)
                            .as("an archive-routed count")
                            .isInstanceOfSatisfying(MongoException.class, e -> {
                                assertThat(e.getCode()).isEqualTo(6);
                                assertThat(e.getMessage()).contains("stalled");
                            });
                    assertThatThrownBy(() -> orders.find(Filters.eq("_id", 1)).first())
                            .as("an archived document's point read")
                            .isInstanceOfSatisfying(
                                    MongoException.class,
                                    e -> assertThat(e.getCode()).isEqualTo(6));
                    // the probe's read held at the fail point is answered once its 15 s are up: an answer that late
                    // shows the pause, not a serving archive (before, the proxy took it as serving and the next
                    // requests waited out the pause again)
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (proxy.archiveLateProbeAnswers() == 0) {
                        assertThat(System.nanoTime())
                                .as("the probe's held read answered")
                                .isLessThan(deadline);
                        Thread.sleep(20);
                    }
                    assertThat(proxy.archiveOutOfServiceFor())
                            .as("stalled still, after the probe's late answer")
                            .isPresent();
                    assertThatThrownBy(orders::countDocuments)
                            .as("an archive-routed count after the probe's late answer")
                            .isInstanceOfSatisfying(
                                    MongoException.class,
                                    e -> assertThat(e.getCode()).isEqualTo(6));
                } finally {
                    admin.runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
                }
                awaitOutOfService(proxy, false); // the first probe read answered promptly once the fail point is off
                assertThat(orders.countDocuments())
                        .as("both tiers, after the stall")
                        .isEqualTo(2);
                BsonDocument archived = orders.find(Filters.eq("_id", 1)).first();
                assertThat(archived).isNotNull();
            }
        }
    }

    private static void awaitOutOfService(ProxyServer proxy, boolean expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (proxy.archiveOutOfServiceFor().isPresent() != expected) {
            assertThat(System.nanoTime())
                    .as("the proxy sees the archive " + (expected ? "stalled" : "serving again"))
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
