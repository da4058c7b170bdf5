package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.model.Filters;
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

    @Test
    void archiveReadsAreRefusedAtOnceWhileTheArchiveStallsAndHotReadsGoOn() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(60), Duration.ofMillis(5))) {
            stack.startFeeder();
            stack.archiveOrders().insertOne(SessionConsistencyTest.order(1, OLD, "archived"));
            stack.orders().insertOne(SessionConsistencyTest.order(2, Instant.now(), "hot"));
            assertThat(stack.orders().countDocuments())
                    .as("both tiers, before the stall")
                    .isEqualTo(2);

            var admin = stack.archiveDirect.getDatabase("admin");
            // every read the archive gets from now on waits 40 s before it runs (the probe's is a stall after 10 s);
            // hello, ping and writes are answered
            admin.runCommand(
                    Document.parse(
                            "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {blockConnection: true,"
                                    + " blockTimeMS: 40000, failCommands: ['find', 'count', 'aggregate', 'distinct', 'getMore']}}"));
            try {
                awaitOutOfService(stack, true);
                assertThat(stack.orders()
                                .find(Filters.eq("_id", 2))
                                .first()
                                .getString("state")
                                .getValue())
                        .as("a hot read, served by the fast tier")
                        .isEqualTo("hot");
                assertThatThrownBy(() -> stack.orders().countDocuments())
                        .as("an archive-routed count")
                        .isInstanceOfSatisfying(MongoException.class, e -> {
                            assertThat(e.getCode()).isEqualTo(6);
                            assertThat(e.getMessage()).contains("stalled");
                        });
                assertThatThrownBy(
                                () -> stack.orders().find(Filters.eq("_id", 1)).first())
                        .as("an archived document's point read")
                        .isInstanceOfSatisfying(
                                MongoException.class,
                                e -> assertThat(e.getCode()).isEqualTo(6));
            } finally {
                admin.runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            }
            awaitOutOfService(stack, false); // the probe held at the fail point answers once its 40 s are up
            assertThat(stack.orders().countDocuments())
                    .as("both tiers, after the stall")
                    .isEqualTo(2);
            BsonDocument archived = stack.orders().find(Filters.eq("_id", 1)).first();
            assertThat(archived).isNotNull();
        }
    }

    private static void awaitOutOfService(TieredStack stack, boolean expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (stack.proxy.archiveOutOfServiceFor().isPresent() != expected) {
            assertThat(System.nanoTime())
                    .as("the proxy sees the archive " + (expected ? "stalled" : "serving again"))
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
