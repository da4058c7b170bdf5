package io.thermocline.tiering.feeder;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.changestream.ChangeStreamDocument;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class EventQueueTest {

    static final int BATCH = 5;
    final AtomicLong requested = new AtomicLong();
    final EventQueue queue = new EventQueue(BATCH, null);
    int clock = 1;

    EventQueueTest() {
        queue.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                requested.addAndGet(n);
            }

            @Override
            public void cancel() {}
        });
    }

    @Test
    void ownEventsTakeNoBatchSlotAndRenewTheirDemandAtOnce() throws Exception {
        long initial = requested.get();
        promotion(1, 30); // marker + 30 copies
        assertThat(requested.get() - initial).as("demand renewed on arrival").isEqualTo(31);
        for (int i = 0; i < BATCH; i++) {
            queue.onNext(event("shop", "orders", i, null));
        }
        List<ChangeEvent> batch = next();
        assertThat(batch).hasSize(31 + BATCH);
        assertThat(batch.subList(0, 31))
                .allSatisfy(e -> assertThat(e.fullDocument()).isNull());
        assertThat(batch.get(31).fullDocument())
                .as("user events keep their document")
                .isNotNull();
        assertThat(requested.get() - initial)
                .as("the user events' slots renewed once taken")
                .isEqualTo(31 + BATCH);
    }

    @Test
    void ownEventsPastTheirLimitWaitForTheirBatchAndABatchHoldsAtMostTheLimit() throws Exception {
        long initial = requested.get();
        int limit = BATCH * EventQueue.OWN_PER_SLOT;
        promotion(1, limit + 9); // limit + 10 own events
        assertThat(requested.get() - initial)
                .as("no demand renewed past the limit")
                .isEqualTo(limit);
        assertThat(next()).hasSize(limit);
        assertThat(next()).hasSize(10);
        assertThat(requested.get() - initial).isEqualTo(limit + 10);
    }

    @Test
    void userEventsAmongOwnTransactionsFillWholeBatches() throws Exception {
        int users = 6 * BATCH;
        for (int i = 0; i < users; i++) {
            queue.onNext(event("shop", "orders", i, null));
            promotion(2 + i, 14); // 15 own events after each user event: a batch of BATCH events would hold one
        }
        List<Integer> usersPerBatch = new java.util.ArrayList<>();
        int seen = 0;
        while (seen < users) {
            long batchUsers =
                    next().stream().filter(e -> e.fullDocument() != null).count();
            usersPerBatch.add((int) batchUsers);
            seen += (int) batchUsers;
        }
        assertThat(usersPerBatch)
                .as("user events per batch (one archive round trip each)")
                .containsOnly(BATCH)
                .hasSize(users / BATCH);
    }

    @Test
    void aSmallBatchGoesWithoutWaitingForTheStreamToPause() throws Exception {
        EventQueue steady = new EventQueue(100, null);
        steady.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {}

            @Override
            public void cancel() {}
        });
        for (int i = 0; i < 3; i++) {
            steady.onNext(event("shop", "orders", i, null));
        }
        // a stream that never pauses for the burst gap: the next event comes as soon as the queue is empty
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread writer = new Thread(() -> {
            for (int i = 3; !stop.get(); ) {
                if (steady.pending() == 0) {
                    steady.onNext(event("shop", "orders", i++, null));
                }
                Thread.onSpinWait();
            }
        });
        writer.start();
        try {
            List<ChangeEvent> batch = steady.nextBatch(100, Duration.ofSeconds(30), Duration.ofMillis(50));
            assertThat(batch.size())
                    .as("what was queued, not held open while the stream goes on (it was, up to the batch size)")
                    .isBetween(3, EventQueue.SMALL_BATCH - 1);
        } finally {
            stop.set(true);
            writer.join();
        }
    }

    private List<ChangeEvent> next() throws InterruptedException {
        return queue.nextBatch(BATCH, Duration.ofMillis(50), Duration.ofMillis(50));
    }

    private void promotion(int session, int copies) {
        BsonDocument lsid = new BsonDocument(
                "id", new BsonBinary(new byte[] {(byte) session, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
        queue.onNext(event("thermocline", "provenance", 0, lsid));
        for (int i = 0; i < copies; i++) {
            queue.onNext(event("shop", "orders", 1000 + i, lsid));
        }
    }

    private ChangeStreamDocument<BsonDocument> event(String db, String coll, int id, BsonDocument lsid) {
        int t = clock++;
        BsonDocument key = new BsonDocument("_id", new BsonInt32(id));
        return new ChangeStreamDocument<>(
                "insert",
                new BsonDocument("_data", new BsonString("token-" + t)),
                new BsonDocument("db", new BsonString(db)).append("coll", new BsonString(coll)),
                null,
                null,
                key.clone().append("state", new BsonString("s")),
                null,
                key,
                new BsonTimestamp(100, lsid == null ? t : 0),
                null,
                lsid == null ? null : new BsonInt64(1),
                lsid,
                null,
                null,
                null);
    }
}
