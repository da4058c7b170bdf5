package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.ReadConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code fullDocument: "updateLookup"} on a change stream through the proxy, read after the updated document left the
 * fast tier: one replica set's lookup returns the document's current version, so the proxy's does too, wherever the
 * document is now (the archive, after an eviction); it returns none only where one replica set returns none (the
 * document deleted). Each stream is opened before the writes and read only after the eviction or delete, so the fast
 * tier looks the document up when it is already gone there.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ChangeStreamUpdateLookupTest {

    static final Instant NOW = Instant.now();
    static final Duration OLD = Duration.ofHours(4);

    static TieredStack stack;
    static MirrorBarrier barrier;

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(10));
        stack.startFeeder();
        stack.coverSince(NOW.minus(Duration.ofHours(1)));
        barrier = new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "update-lookup-test");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @Test
    void anUpdateEventReadAfterTheEvictionCarriesTheDocumentFromTheArchive() throws Exception {
        // an old document written through the proxy lands in the fast tier, outside the window: the evictor removes it
        stack.orders().insertOne(TieredProxyTest.order(1, NOW.minus(OLD), "new"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream = stack.orders()
                .watch(BsonDocument.class)
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .cursor()) {
            stack.orders().updateOne(Filters.eq("_id", 1), Updates.set("state", "paid"));
            evict(1);
            BsonDocument archived =
                    stack.archiveOrders().find(Filters.eq("_id", 1)).first();
            assertThat(archived.getString("state")).isEqualTo(new BsonString("paid"));

            ChangeStreamDocument<BsonDocument> update = ChangeStreamFidelityTest.next(stream);
            assertThat(update.getOperationTypeString()).isEqualTo("update");
            assertThat(update.getFullDocument())
                    .as("the document's current version, as one replica set's lookup returns it")
                    .isEqualTo(archived);
        }
    }

    @Test
    void aStreamWithMatchStagesGetsTheDocumentToo() throws Exception {
        stack.orders().insertOne(TieredProxyTest.order(2, NOW.minus(OLD), "new"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream = stack.orders()
                .watch(
                        List.of(Aggregates.match(Filters.in("operationType", List.of("update", "delete")))),
                        BsonDocument.class)
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .cursor()) {
            stack.orders().updateOne(Filters.eq("_id", 2), Updates.set("state", "shipped"));
            evict(2);
            ChangeStreamDocument<BsonDocument> update = ChangeStreamFidelityTest.next(stream);
            assertThat(update.getFullDocument())
                    .isEqualTo(stack.archiveOrders().find(Filters.eq("_id", 2)).first());
        }
    }

    @Test
    void anUpdateEventReadAfterTheDocumentsDeleteCarriesNone() throws Exception {
        stack.orders().insertOne(TieredProxyTest.order(3, NOW.minus(OLD), "new"));
        stack.orders().insertOne(TieredProxyTest.order(4, NOW.minus(OLD), "new"));
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream = stack.orders()
                .watch(BsonDocument.class)
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .cursor()) {
            stack.orders().updateOne(Filters.eq("_id", 3), Updates.set("state", "paid"));
            stack.orders().deleteOne(Filters.eq("_id", 3));
            // evicted, then deleted through the proxy (the archive's copy): deleted as well
            stack.orders().updateOne(Filters.eq("_id", 4), Updates.set("state", "paid"));
            evict(4);
            stack.orders().deleteOne(Filters.eq("_id", 4));

            ChangeStreamDocument<BsonDocument> update = ChangeStreamFidelityTest.next(stream);
            assertThat(update.getOperationTypeString()).isEqualTo("update");
            assertThat(update.getFullDocument())
                    .as("deleted: none, as on one replica set")
                    .isNull();
            assertThat(ChangeStreamFidelityTest.next(stream).getOperationTypeString())
                    .isEqualTo("delete");
            ChangeStreamDocument<BsonDocument> evictedThenDeleted = ChangeStreamFidelityTest.next(stream);
            assertThat(evictedThenDeleted.getOperationTypeString()).isEqualTo("update");
            assertThat(evictedThenDeleted.getFullDocument())
                    .as("deleted after its eviction: none")
                    .isNull();
            assertThat(ChangeStreamFidelityTest.next(stream).getOperationTypeString())
                    .isEqualTo("delete");
        }
    }

    /**
     * The lookup of a document evicted since its event waits for the feeder (the archive's copy may still miss writes
     * before the eviction); when the feeder does not mirror within the barrier timeout, the getMore fails with 262
     * and the {@code ResumableChangeStreamError} label rather than deliver an event without its document or with a
     * stale one. The driver resumes such a stream by itself, and once the feeder runs again the event arrives with the
     * document's current version.
     */
    @Test
    void aLookupTheFeederCannotCoverFailsResumablyAndTheResumedStreamCarriesTheDocument() throws Exception {
        stack.orders().insertOne(TieredProxyTest.order(5, NOW.minus(OLD), "new"));
        MongoDatabase shop = stack.client.getDatabase(TieredStack.POLICY.database());
        ClientSession session = stack.client.startSession(); // a cursor belongs to the session that opened it
        BsonDocument opened = shop.runCommand(
                session,
                new BsonDocument("aggregate", new BsonString(TieredStack.POLICY.collection()))
                        .append(
                                "pipeline",
                                new BsonArray(List.of(new BsonDocument(
                                        "$changeStream",
                                        new BsonDocument("fullDocument", new BsonString("updateLookup"))))))
                        .append("cursor", new BsonDocument()),
                BsonDocument.class);
        long cursorId = opened.getDocument("cursor").getInt64("id").getValue();
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream = stack.orders()
                .watch(BsonDocument.class)
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .cursor()) {
            stack.orders().updateOne(Filters.eq("_id", 5), Updates.set("state", "returned"));
            evict(5);
            // the lookups read majority-committed data: the eviction must be there too, or the lookup finds the
            // document still in the fast tier and never needs the feeder
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (stack.fastOrders()
                            .withReadConcern(ReadConcern.MAJORITY)
                            .find(Filters.eq("_id", 5))
                            .first()
                    != null) {
                assertThat(System.nanoTime()).as("eviction majority-committed").isLessThan(deadline);
                Thread.sleep(20);
            }
            stack.stopFeeder(); // from here on the feeder mirrors nothing: the lookup's barrier cannot pass
            try {
                assertThatThrownBy(() -> {
                            BsonDocument batch;
                            do { // an empty batch only if the event was not visible yet; the update's comes next
                                batch = shop.runCommand(
                                                session,
                                                new BsonDocument("getMore", new BsonInt64(cursorId))
                                                        .append(
                                                                "collection",
                                                                new BsonString(TieredStack.POLICY.collection()))
                                                        .append("maxTimeMS", new BsonInt32(1000)),
                                                BsonDocument.class)
                                        .getDocument("cursor");
                            } while (batch.getArray("nextBatch").isEmpty());
                            throw new AssertionError("a batch without the lookup's barrier: " + batch.toJson());
                        })
                        .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                            assertThat(e.getErrorCode())
                                    .as("%s", e.getResponse())
                                    .isEqualTo(262);
                            assertThat(e.hasErrorLabel("ResumableChangeStreamError"))
                                    .as("the driver resumes the stream: %s", e.getResponse())
                                    .isTrue();
                            assertThat(e.getErrorMessage()).contains("feeder");
                        });
            } finally {
                session.close();
                stack.startFeeder();
            }
            ChangeStreamDocument<BsonDocument> update = ChangeStreamFidelityTest.next(stream);
            assertThat(update.getOperationTypeString()).isEqualTo("update");
            assertThat(update.getFullDocument())
                    .as("after the resume, the document's current version from the archive")
                    .isEqualTo(stack.archiveOrders().find(Filters.eq("_id", 5)).first());
            assertThat(update.getFullDocument().getString("state")).isEqualTo(new BsonString("returned"));
        }
    }

    /** Mirrors everything, runs an evictor pass and waits until the document left the fast tier. */
    private static void evict(int id) throws InterruptedException {
        assertThat(barrier.sync(Duration.ofSeconds(30))).as("mirrored").isPresent();
        stack.evictorForPasses().runPass();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (stack.fastOrders().find(Filters.eq("_id", id)).first() != null) {
            assertThat(System.nanoTime()).as("document %d evicted", id).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
