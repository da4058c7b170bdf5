package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fence;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An application's transaction on a tiered collection behaves as on one replica set wherever the fast
 * tier can hold what it touches: point writes on cold documents copy them in inside the transaction
 * (an abort takes the copy back), and deletes, of cold or hot documents, leave their fences inside it
 * (the archive loses the document when, and only when, the transaction commits).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionCopyUpTest {

    static final Instant NOW = Instant.now();
    static TieredStack stack;
    static MirrorBarrier barrier;

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(5));
        stack.startFeeder();
        stack.coverSince(NOW.minus(Duration.ofHours(1)));
        barrier = new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "transaction-test");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static void archived(int id) {
        stack.archiveOrders().insertOne(SessionConsistencyTest.order(id, NOW.minus(Duration.ofHours(3)), "cold"));
    }

    private static void mirrored() throws InterruptedException {
        assertThat(barrier.sync(Duration.ofSeconds(10))).as("the feeder mirrored the fast tier").isPresent();
    }

    private static BsonDocument fence(int id) {
        return stack.fastDirect.getDatabase(MetadataStore.DATABASE).getCollection(MetadataStore.FENCES, BsonDocument.class)
                .find(Filters.eq("_id", Fence.key(TieredStack.POLICY.namespace(), new BsonInt32(id)))).first();
    }

    @Test
    void aDeleteOfAnArchivedDocumentInsideATransactionDeletesItOnCommit() throws Exception {
        archived(10);
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            assertThat(stack.orders().deleteOne(session, Filters.eq("_id", 10)).getDeletedCount()).isOne();
            assertThat(stack.orders().find(session, Filters.eq("_id", 10)).first()).as("inside the transaction").isNull();
            session.commitTransaction();
        }
        mirrored();
        assertThat(stack.archiveOrders().countDocuments(Filters.eq("_id", 10))).as("in the archive").isZero();
        assertThat(stack.orders().find(Filters.eq("_id", 10)).first()).as("through the proxy").isNull();
        assertThat(fence(10).getString("kind").getValue()).isEqualTo("USER_DELETE");
    }

    @Test
    void anUpdateOfAnArchivedDocumentInsideAnAbortedTransactionLeavesNoCopy() throws Exception {
        archived(11);
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            assertThat(stack.orders().updateOne(session, Filters.eq("_id", 11), Updates.set("v", 1)).getMatchedCount()).isOne();
            session.abortTransaction();
        }
        assertThat(stack.fastOrders().countDocuments(Filters.eq("_id", 11))).as("copies in the fast tier after the abort").isZero();
        mirrored();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 11)).first().containsKey("v")).isFalse();
    }

    @Test
    void anUpdateOfAnArchivedDocumentInsideATransactionCommitsIt() throws Exception {
        archived(12);
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            assertThat(stack.orders().updateOne(session, Filters.eq("_id", 12), Updates.set("v", 2)).getModifiedCount()).isOne();
            assertThat(stack.orders().find(session, Filters.eq("_id", 12)).first().getInt32("v").getValue()).isEqualTo(2);
            session.commitTransaction();
        }
        assertThat(stack.orders().find(Filters.eq("_id", 12)).first().getInt32("v").getValue()).isEqualTo(2);
        mirrored();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 12)).first().getInt32("v").getValue()).isEqualTo(2);
    }

    @Test
    void aDeleteOfHotDocumentsInsideATransactionReachesTheArchiveOnlyOnCommit() throws Exception {
        for (int id = 20; id < 23; id++) {
            stack.orders().insertOne(SessionConsistencyTest.order(id, NOW.minus(Duration.ofMinutes(5)), "hot-in-txn"));
        }
        mirrored();
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            long n = stack.orders().deleteMany(session, Filters.and(Filters.gte("createdAt", Date.from(NOW.minus(Duration.ofMinutes(10)))),
                    Filters.eq("state", "hot-in-txn"))).getDeletedCount();
            assertThat(n).isEqualTo(3);
            mirrored();
            assertThat(stack.archiveOrders().countDocuments(Filters.eq("state", "hot-in-txn"))).as("before the commit").isEqualTo(3);
            session.commitTransaction();
        }
        mirrored();
        assertThat(stack.archiveOrders().countDocuments(Filters.eq("state", "hot-in-txn"))).as("after the commit").isZero();
        assertThat(fence(21).getString("kind").getValue()).isEqualTo("USER_DELETE");
    }

    @Test
    void aPointReadOfAnArchivedDocumentInsideATransactionSeesIt() {
        archived(13);
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            BsonDocument read = stack.orders().find(session, Filters.eq("_id", 13)).first();
            assertThat(read).isNotNull();
            assertThat(read.getString("state")).isEqualTo(new BsonString("cold"));
            session.commitTransaction();
        }
    }

    /**
     * A delete outside the transaction of the document the transaction copied in: they meet on the copy
     * (and its claimed fence), so whichever commits second waits or fails; the acknowledged delete is never
     * undone by the transaction's copy.
     */
    @Test
    void aDeleteRacingATransactionThatCopiedTheDocumentInIsNotUndone() throws Exception {
        archived(30);
        long deleted;
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            assertThat(stack.orders().updateOne(session, Filters.eq("_id", 30), Updates.set("v", 3)).getMatchedCount()).isOne();
            CompletableFuture<Long> delete = CompletableFuture.supplyAsync(() -> stack.orders().deleteOne(Filters.eq("_id", 30)).getDeletedCount());
            Thread.sleep(300);
            try {
                session.commitTransaction();
            } catch (MongoException e) {
                assertThat(e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)
                        || e.hasErrorLabel(MongoException.UNKNOWN_TRANSACTION_COMMIT_RESULT_LABEL)).as("%s", e).isTrue();
            }
            deleted = delete.get(60, TimeUnit.SECONDS);
        }
        assertThat(deleted).as("the delete's n").isOne();
        mirrored();
        assertThat(stack.fastOrders().countDocuments(Filters.eq("_id", 30))).as("in the fast tier").isZero();
        assertThat(stack.archiveOrders().countDocuments(Filters.eq("_id", 30))).as("in the archive").isZero();
        assertThat(stack.orders().find(Filters.eq("_id", 30)).first()).as("through the proxy").isNull();
    }
}
