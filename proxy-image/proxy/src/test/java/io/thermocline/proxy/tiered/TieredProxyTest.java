package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Behaviours of the tiering proxy, one at a time, with the official driver through the proxy. */
class TieredProxyTest {

    static TieredStack stack;
    static MetadataStore store;
    static final Instant NOW = Instant.now();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20));
        stack.startFeeder();
        store = new MetadataStore(stack.fastWorkers);
        // the fast tier covers the last hour (as after a completed warm-up)
        store.updateNamespace(TieredStack.POLICY.namespace(), s -> s.withCoverage(NOW.minus(Duration.ofHours(1))));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (stack.routing.table().coverage(TieredStack.POLICY.namespace()) instanceof CoverageBound.Nothing) {
            assertThat(System.nanoTime())
                    .as("the proxy follows the shared state")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    static BsonDocument order(int id, Instant createdAt, String state) {
        return SessionConsistencyTest.order(id, createdAt, state);
    }

    @Test
    void pointReadMissReadsTheArchiveAndPromotesADocumentInsideTheWindow() throws Exception {
        BsonDocument recent = order(100, NOW.minus(Duration.ofMinutes(5)), "archived");
        stack.archiveOrders().insertOne(recent);
        assertThat(stack.orders().find(Filters.eq("_id", 100)).first()).isEqualTo(recent);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (stack.fastOrders().find(Filters.eq("_id", 100)).first() == null) {
            assertThat(System.nanoTime()).as("promoted into the fast tier").isLessThan(deadline);
            Thread.sleep(20);
        }
        assertThat(stack.fastOrders().find(Filters.eq("_id", 100)).first()).isEqualTo(recent);
    }

    @Test
    void insertOfAnIdOnlyTheArchiveHoldsFailsWithDuplicateKey() {
        stack.archiveOrders().insertOne(order(200, NOW.minus(Duration.ofHours(5)), "old"));
        assertThatThrownBy(() -> stack.orders().insertOne(order(200, NOW, "again")))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getCategory()).isEqualTo(ErrorCategory.DUPLICATE_KEY));
        assertThat(stack.orders().find(Filters.eq("_id", 200)).first())
                .isEqualTo(order(200, NOW.minus(Duration.ofHours(5)), "old"));
    }

    @Test
    void deleteOfAColdDocumentLeavesATombstoneAndReachesTheArchive() throws Exception {
        stack.archiveOrders().insertOne(order(300, NOW.minus(Duration.ofHours(4)), "cold"));
        assertThat(stack.orders().deleteOne(Filters.eq("_id", 300)).getDeletedCount())
                .isEqualTo(1);
        BsonDocument fence = fetchFence(300);
        assertThat(fence).isNotNull();
        assertThat(fence.getString("kind").getValue()).isEqualTo(Fence.Kind.USER_DELETE.name());
        assertThat(stack.orders().find(Filters.eq("_id", 300)).first()).isNull();
        assertThat(new MirrorBarrier(stack.fastWorkers, store, "test").sync(Duration.ofSeconds(10)))
                .isPresent();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 300)).first())
                .as("deleted in the archive")
                .isNull();
    }

    private static BsonDocument fetchFence(int id) {
        return stack.fastDirect
                .getDatabase(MetadataStore.DATABASE)
                .getCollection(MetadataStore.FENCES, BsonDocument.class)
                .find(Filters.eq("_id", Fence.key(TieredStack.POLICY.namespace(), new BsonInt32(id))))
                .first();
    }

    @Test
    void multiDocumentUpdateOverBothTiersReportsExactCounts() {
        stack.archiveOrders()
                .insertMany(List.of(
                        order(400, NOW.minus(Duration.ofHours(3)), "bulk"),
                        order(401, NOW.minus(Duration.ofHours(3)), "bulk")));
        stack.orders().insertOne(order(402, NOW.minus(Duration.ofMinutes(1)), "bulk"));
        var result = stack.orders()
                .updateMany(Filters.eq("state", "bulk"), new Document("$set", new Document("state", "done")));
        assertThat(result.getMatchedCount()).isEqualTo(3);
        assertThat(result.getModifiedCount()).isEqualTo(3);
        assertThat(stack.orders().countDocuments(Filters.eq("state", "done"))).isEqualTo(3);
    }

    @Test
    void ddlAppliesToBothTiers() {
        stack.orders().createIndex(Indexes.ascending("state"));
        assertThat(stack.fastOrders().listIndexes().into(new ArrayList<>()))
                .anySatisfy(i -> assertThat(i.get("name")).isEqualTo("state_1"));
        assertThat(stack.archiveOrders().listIndexes().into(new ArrayList<>()))
                .anySatisfy(i -> assertThat(i.get("name")).isEqualTo("state_1"));
    }

    @Test
    void explainSaysWhichTierAndWhy() {
        Document hot = stack.orders()
                .find(Filters.gte("createdAt", Date.from(NOW.minus(Duration.ofMinutes(10)))))
                .explain();
        assertThat(hot.get("thermocline", Document.class))
                .containsEntry("tier", "fast_tier")
                .containsEntry("reason", "age_bound_covered");
        Document cold = stack.orders().find(Filters.eq("state", "x")).explain();
        assertThat(cold.get("thermocline", Document.class))
                .containsEntry("tier", "archive")
                .containsEntry("reason", "no_age_bound");
    }

    @Test
    void transactionThatIsNotProvablyHotFailsWithAClearError() {
        try (ClientSession session = stack.client.startSession()) {
            session.startTransaction();
            assertThatThrownBy(() -> stack.orders()
                            .find(session, Filters.eq("state", "x"))
                            .first())
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(263);
                        assertThat(e.getErrorMessage()).contains("createdAt");
                    });
            session.abortTransaction();
        }
    }

    @Test
    void provablyHotTransactionCommitsOnTheFastTier() {
        long before = stack.routing.metrics().count("transaction", Served.FAST);
        // the proxy fails closed while its view of the shared state is older than the propagation delay (100 ms here):
        // nothing is provably hot then, and a transaction is refused (263). A starved machine can miss that delay, so a
        // refusal for that reason, and only that one, is retried, a bounded number of times
        for (int attempt = 1; ; attempt++) {
            try (ClientSession session = stack.client.startSession()) {
                session.startTransaction();
                stack.orders()
                        .insertOne(
                                session,
                                new BsonDocument("createdAt", new org.bson.BsonDateTime(NOW.toEpochMilli()))
                                        .append("state", new org.bson.BsonString("in-txn")));
                assertThat(stack.orders()
                                .countDocuments(
                                        session,
                                        Filters.and(
                                                Filters.gte("createdAt", Date.from(NOW.minusSeconds(1))),
                                                Filters.eq("state", "in-txn"))))
                        .isEqualTo(1);
                session.commitTransaction();
                break;
            } catch (MongoCommandException refused) {
                assertThat(refused.getErrorCode()).as(refused.getMessage()).isEqualTo(263);
                assertThat(refused.getErrorMessage())
                        .as("refused only for a stale view")
                        .contains("nothing_covered");
                assertThat(attempt).as("a fresh view within 20 attempts").isLessThan(20);
            }
        }
        assertThat(stack.fastOrders().countDocuments(Filters.eq("state", "in-txn")))
                .isEqualTo(1);
        assertThat(stack.routing.metrics().count("transaction", Served.FAST)).isGreaterThan(before);
    }

    @Test
    void archiveCursorKeepsWorkingThroughGetMore() {
        List<BsonDocument> old = new ArrayList<>();
        for (int i = 500; i < 530; i++) {
            old.add(order(i, NOW.minus(Duration.ofHours(6)), "page"));
        }
        stack.archiveOrders().insertMany(old);
        List<BsonDocument> read = stack.orders()
                .find(Filters.eq("state", "page"))
                .sort(new Document("_id", 1))
                .batchSize(4)
                .into(new ArrayList<>());
        assertThat(read).isEqualTo(old);
    }

    @Test
    void applicationChangeStreamSeesUserWritesButNotThermoclinesOwn() throws Exception {
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream =
                stack.orders().watch(BsonDocument.class).cursor()) {
            BsonDocument archived = order(600, NOW.minus(Duration.ofMinutes(2)), "archived");
            stack.archiveOrders().insertOne(archived);
            assertThat(stack.orders().find(Filters.eq("_id", 600)).first()).isEqualTo(archived);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (stack.fastOrders().find(Filters.eq("_id", 600)).first() == null) {
                assertThat(System.nanoTime()).as("promoted into the fast tier").isLessThan(deadline);
                Thread.sleep(20);
            }
            stack.orders().insertOne(order(601, NOW, "user"));
            ChangeStreamDocument<BsonDocument> first = null;
            deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (first == null && System.nanoTime() < deadline) {
                first = stream.tryNext();
            }
            assertThat(first).isNotNull();
            assertThat(first.getDocumentKey())
                    .as("the promotion's insert is filtered out")
                    .isEqualTo(new BsonDocument("_id", new BsonInt32(601)));
        }
    }
}
