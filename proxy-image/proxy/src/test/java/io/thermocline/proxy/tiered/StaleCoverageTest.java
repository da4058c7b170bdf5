package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A fast-tier cursor is served only while the coverage bound it was routed with still holds (issue 10, bug 12). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StaleCoverageTest {

    @Test
    void getMoreOnAFastTierCursorFailsOnceTheBoundItReliedOnWasRaisedPastIt() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            stack.startFeeder();
            MetadataStore store = new MetadataStore(stack.fastWorkers);
            Instant now = Instant.now();
            String ns = TieredStack.POLICY.namespace();
            store.updateNamespace(ns, s -> s.withCoverage(now.minus(Duration.ofHours(1))));
            awaitCoverage(stack, b -> b.covers(now.minus(Duration.ofMinutes(30))));
            for (int i = 0; i < 10; i++) {
                stack.orders().insertOne(SessionConsistencyTest.order(i, now.minusSeconds(i), "recent"));
            }
            Date from = Date.from(now.minus(Duration.ofMinutes(30)));
            MongoCursor<BsonDocument> cursor = fastCursor(stack, from);
            try {
                // an evictor raises the bound past the cursor's range: it may now delete what the cursor would return
                store.updateNamespace(ns, s -> s.withCoverage(now.minus(Duration.ofMinutes(10))));
                awaitCoverage(stack, b -> !b.covers(now.minus(Duration.ofMinutes(30))));

                assertThatThrownBy(cursor::next).isInstanceOfSatisfying(MongoException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(175);
                    assertThat(e.getMessage()).contains("re-run the query");
                });
            } finally {
                cursor.close();
            }
            // re-run: routed with the current bound, to the archive, complete once the feeder caught up
            assertThat(stack.orders().countDocuments(Filters.gte("createdAt", from)))
                    .isEqualTo(10);
        }
    }

    /**
     * A cursor whose first batch the fast tier served (a first batch falls back to the archive when this
     * proxy's view of the state went stale while it was read, which a loaded machine can cause: try again).
     */
    private static MongoCursor<BsonDocument> fastCursor(TieredStack stack, Date from) {
        for (int attempt = 0; attempt < 10; attempt++) {
            long fastBefore = stack.routing.metrics().count("read", Served.FAST);
            MongoCursor<BsonDocument> cursor = stack.orders()
                    .find(Filters.gte("createdAt", from))
                    .batchSize(2)
                    .iterator();
            cursor.next();
            cursor.next();
            if (stack.routing.metrics().count("read", Served.FAST) == fastBefore + 1) {
                return cursor;
            }
            cursor.close();
        }
        throw new AssertionError("the fast tier never served the covered read");
    }

    private static void awaitCoverage(TieredStack stack, Predicate<CoverageBound> wanted) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!wanted.test(stack.routing.table().coverage(TieredStack.POLICY.namespace()))) {
            assertThat(System.nanoTime())
                    .as("the proxy follows the shared state")
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
