package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.EvictorConfig;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A user delete whose transaction read the document in the fast tier, while the evictor removes it
 * before the delete's own write: the delete then removes nothing in the fast tier, yet its tombstone
 * makes the feeder delete the archive copy. The client must not be told n=0 for a document that is
 * gone from both tiers: the delete starts over and finds it in the archive (n=1). (On a server with
 * snapshot isolation the tombstone write meets a WriteConflict; the proxy must not depend on it.)
 * The fast tier's failCommand fail point holds the delete's tombstone write while the evictor runs.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DeleteEvictionRaceTest {

    static TieredStack stack;
    static MirrorBarrier barrier;
    static final Instant NOW = Instant.now();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        barrier = new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "delete-eviction-race-test");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void aDeleteRacingTheEvictionOfItsDocumentDeletesItAndCountsIt() throws Exception {
        BsonDocument cold = SessionConsistencyTest.order(800_000, NOW.minus(Duration.ofHours(2)), "cold");
        stack.fastOrders().insertOne(cold);
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored").isPresent();
        stack.stopFeeder(); // nothing else writes to the fast tier while the fail point waits for the delete's write
        Evictor evictor = new Evictor(stack.fastWorkers, stack.archiveWorkers, List.of(TieredStack.POLICY),
                new EvictorConfig(Duration.ofMillis(100), 50, 100_000), Evictor.Options.defaults()
                .withBoundPropagationDelay(Duration.ZERO).withBarrierTimeout(Duration.ofSeconds(10))
                .withRegistry(new PrometheusRegistry()));
        long n;
        stack.fastDirect.getDatabase("admin").runCommand(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                + " data: {failCommands: ['update'], blockConnection: true, blockTimeMS: 2500}}"));
        try {
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(
                    () -> stack.orders().deleteOne(Filters.eq("_id", 800_000)).getDeletedCount());
            Thread.sleep(500); // the delete read the document and waits on its tombstone write
            stack.startFeeder();
            assertThat(evictor.runPass().count(TieredStack.POLICY.namespace(), io.thermocline.tiering.evictor.Eligibility.EVICT))
                    .as("evicted meanwhile").isEqualTo(1);
            n = delete.get(30, TimeUnit.SECONDS);
        } finally {
            stack.fastDirect.getDatabase("admin").runCommand(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            evictor.close();
        }
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("mirrored after the delete").isPresent();
        boolean survives = stack.fastOrders().countDocuments(Filters.eq("_id", 800_000)) + stack.archiveOrders()
                .countDocuments(Filters.eq("_id", 800_000)) > 0;
        assertThat(n + " deleted, document " + (survives ? "survives" : "gone")).as("n and the document agree, as on one database")
                .isEqualTo("1 deleted, document gone");
    }
}
