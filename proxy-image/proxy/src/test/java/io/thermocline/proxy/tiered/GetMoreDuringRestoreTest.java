package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.backup.RestoreSync;
import io.thermocline.tiering.mode.Phase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 43 item 2: a cursor of a tiered read opened before {@code restore-sync --hold} does not go on reading once the
 * fleet is held (phase Restoring). Its next getMore fails with the refusal the other tiered commands get (drivers do not
 * retry a getMore) and the cursor is ended, whichever replica the getMore lands on, from the fast tier or the archive.
 * Before, the getMore went on returning the fast tier's documents, future the restore takes away included.
 */
@Timeout(180)
class GetMoreDuringRestoreTest {

    @Test
    void cursorsOpenedBeforeTheHoldFailAndEndOnceTheFleetIsHeld() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            ProxyServer second = stack.anotherProxy("tiered-test-1");
            Instant now = Instant.now();
            stack.startFeeder();
            List<BsonDocument> cold = new ArrayList<>();
            for (int id = 1; id <= 6; id++) {
                cold.add(order(id, now.minus(Duration.ofHours(3))));
            }
            stack.archiveOrders().insertMany(cold);
            stack.coverSince(now.minus(Duration.ofMinutes(30)), stack.moreRoutings.get(0));
            for (int id = 100; id < 106; id++) {
                stack.orders().insertOne(order(id, now));
            }
            Date recent = Date.from(now.minus(Duration.ofMinutes(10)));
            try (MongoClient viaSecond =
                    MongoClients.create("mongodb://127.0.0.1:" + second.port() + "/?retryReads=true")) {
                // batches of 2: the first in the find's reply, the rest by getMore
                MongoCursor<BsonDocument> fast = stack.orders()
                        .find(Filters.gte("createdAt", recent))
                        .sort(Sorts.ascending("_id"))
                        .batchSize(2)
                        .iterator();
                MongoCursor<BsonDocument> archived = stack.orders()
                        .find(Filters.lt("createdAt", recent))
                        .sort(Sorts.ascending("_id"))
                        .batchSize(2)
                        .iterator();
                MongoCursor<BsonDocument> fastOnSecond = viaSecond
                        .getDatabase("shop")
                        .getCollection("orders", BsonDocument.class)
                        .find(Filters.gte("createdAt", recent))
                        .sort(Sorts.ascending("_id"))
                        .batchSize(2)
                        .iterator();
                assertThat(List.of(fast.next(), fast.next()))
                        .extracting(d -> d.getInt32("_id").getValue())
                        .containsExactly(100, 101);
                assertThat(List.of(archived.next(), archived.next()))
                        .extracting(d -> d.getInt32("_id").getValue())
                        .containsExactly(1, 2);
                assertThat(fastOnSecond.next().getInt32("_id").getValue()).isEqualTo(100);
                long fastCursorId = fast.getServerCursor().getId();

                new RestoreSync(
                                stack.fastWorkers,
                                stack.archiveWorkers,
                                List.of(TieredStack.POLICY),
                                Clock.systemUTC(),
                                line -> {})
                        .hold(Duration.ofSeconds(60));
                // the fast tier's future: a write the restore takes away (made behind the held proxies, as a late
                // feeder would)
                stack.fastOrders().insertOne(order(200, now));

                for (MongoCursor<BsonDocument> cursor : List.of(archived, fast)) {
                    MongoException refused = catchThrowableOfType(() -> cursor.next(), MongoException.class);
                    assertThat(refused).as("the getMore after the hold").isNotNull();
                    assertThat(refused.getCode()).as("%s", refused.getMessage()).isEqualTo(262);
                    assertThat(refused.getMessage()).contains("Restoring").contains("re-run the query");
                }
                // the second cursor was opened on the first replica's fleet peer: its owner refuses it the same
                fastOnSecond.next();
                MongoException onSecond = catchThrowableOfType(() -> fastOnSecond.next(), MongoException.class);
                assertThat(onSecond)
                        .as("the getMore on the other replica after the hold")
                        .isNotNull();
                assertThat(onSecond.getCode()).as("%s", onSecond.getMessage()).isEqualTo(262);

                // ended, not paused: the same cursor tried again is not found
                MongoException again = catchThrowableOfType(
                        () -> stack.client
                                .getDatabase("shop")
                                .runCommand(new BsonDocument("getMore", new BsonInt64(fastCursorId))
                                        .append("collection", new BsonString("orders"))),
                        MongoException.class);
                assertThat(again).as("a getMore on the ended cursor").isNotNull();
                assertThat(again.getCode()).as("%s", again.getMessage()).isEqualTo(43);
            }
        }
    }

    /**
     * A cursor left idle from before the hold until after the reset never touched the refusal above: its next getMore ends
     * it, with the QueryPlanKilled mongod gives a cursor whose collection a restore dropped. Before, the archive cursor went
     * on reading the restored archive after the batches it had returned from the one before.
     */
    @Test
    void aCursorLeftIdleThroughTheRestoreIsEndedAtItsNextGetMore() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            Instant now = Instant.now();
            stack.startFeeder();
            List<BsonDocument> cold = new ArrayList<>();
            for (int id = 1; id <= 6; id++) {
                cold.add(order(id, now.minus(Duration.ofHours(3))));
            }
            stack.archiveOrders().insertMany(cold);
            stack.coverSince(now.minus(Duration.ofMinutes(30)));
            for (int id = 100; id < 106; id++) {
                stack.orders().insertOne(order(id, now));
            }
            Date recent = Date.from(now.minus(Duration.ofMinutes(10)));
            MongoCursor<BsonDocument> archived = stack.orders()
                    .find(Filters.lt("createdAt", recent))
                    .sort(Sorts.ascending("_id"))
                    .batchSize(2)
                    .iterator();
            MongoCursor<BsonDocument> fast = stack.orders()
                    .find(Filters.gte("createdAt", recent))
                    .sort(Sorts.ascending("_id"))
                    .batchSize(2)
                    .iterator();
            assertThat(List.of(archived.next(), archived.next()))
                    .extracting(d -> d.getInt32("_id").getValue())
                    .containsExactly(1, 2);
            assertThat(List.of(fast.next(), fast.next()))
                    .extracting(d -> d.getInt32("_id").getValue())
                    .containsExactly(100, 101);

            RestoreSync restore = new RestoreSync(
                    stack.fastWorkers,
                    stack.archiveWorkers,
                    List.of(TieredStack.POLICY),
                    Clock.systemUTC(),
                    line -> {});
            restore.hold(Duration.ofSeconds(60));
            // the restore: the archive goes back to a backup that holds documents 1-4 only
            stack.archiveOrders().deleteMany(Filters.in("_id", 5, 6));
            restore.resync();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (stack.routing.modes().gate().view().document().phase() != Phase.DRAINED) {
                assertThat(System.nanoTime())
                        .as("the proxy follows the restore to Drained")
                        .isLessThan(deadline);
                Thread.sleep(20);
            }

            for (MongoCursor<BsonDocument> cursor : List.of(archived, fast)) {
                MongoException ended = catchThrowableOfType(() -> cursor.next(), MongoException.class);
                assertThat(ended).as("the getMore after the restore").isNotNull();
                assertThat(ended.getCode()).as("%s", ended.getMessage()).isEqualTo(175);
                assertThat(ended.getMessage()).contains("restored from a backup");
            }
            assertThat(stack.orders().find(Filters.lt("createdAt", recent)).into(new ArrayList<>()))
                    .as("the query run again reads the restored archive")
                    .extracting(d -> d.getInt32("_id").getValue())
                    .containsExactlyInAnyOrder(1, 2, 3, 4);
        }
    }

    private static BsonDocument order(int id, Instant createdAt) {
        return new BsonDocument("_id", new BsonInt32(id))
                .append("createdAt", new BsonDateTime(createdAt.toEpochMilli()));
    }
}
