package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writes the proxy runs in its own guarded transaction (promotion of archived documents and the
 * user's write in one fast-tier transaction): the client's reply is what one database would give,
 * and every write it acknowledges exists.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GuardedWritesTest {

    static TieredStack stack;
    static final Instant NOW = Instant.now();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20));
        stack.startFeeder();
        stack.coverSince(NOW.minus(Duration.ofHours(1)));
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    static BsonDocument order(int id, Instant createdAt, String state) {
        return SessionConsistencyTest.order(id, createdAt, state);
    }

    private static boolean exists(int id) {
        return stack.orders().find(Filters.eq("_id", id)).first() != null;
    }

    private static void mirrored() throws InterruptedException {
        assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test").sync(Duration.ofSeconds(10)))
                .isPresent();
    }

    @Test
    void orderedInsertOverAnArchivedIdKeepsTheDocumentsBeforeTheDuplicate() throws Exception {
        BsonDocument archived = order(200, NOW.minus(Duration.ofHours(5)), "archived");
        stack.archiveOrders().insertOne(archived);
        MongoBulkWriteException e = catchThrowableOfType(MongoBulkWriteException.class, () -> stack.orders().insertMany(
                List.of(order(1000, NOW, "new"), order(200, NOW, "duplicate"), order(1001, NOW, "new"))));
        assertThat(e).as("E11000 for the archived _id").isNotNull();
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(1);
        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex, BulkWriteError::getCode).containsExactly(
                org.assertj.core.groups.Tuple.tuple(1, 11000));
        assertThat(exists(1000)).as("the acknowledged insert exists").isTrue();
        assertThat(exists(1001)).as("an ordered insert stops at the error").isFalse();
        mirrored();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 200)).first()).as("the archived document is untouched").isEqualTo(archived);
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 1000)).first()).isNotNull();
    }

    @Test
    void unorderedInsertOverAnArchivedIdInsertsAllTheOthers() throws Exception {
        BsonDocument archived = order(201, NOW.minus(Duration.ofHours(5)), "archived");
        stack.archiveOrders().insertOne(archived);
        MongoBulkWriteException e = catchThrowableOfType(MongoBulkWriteException.class, () -> stack.orders().insertMany(
                List.of(order(2000, NOW, "new"), order(201, NOW, "duplicate"), order(2001, NOW, "new")),
                new InsertManyOptions().ordered(false)));
        assertThat(e).isNotNull();
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(2);
        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex, BulkWriteError::getCode).containsExactly(
                org.assertj.core.groups.Tuple.tuple(1, 11000));
        assertThat(exists(2000)).isTrue();
        assertThat(exists(2001)).isTrue();
        mirrored();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 201)).first()).isEqualTo(archived);
    }

    @Test
    void unorderedInsertWithTwoArchivedIdsReportsBothAtTheirIndexes() {
        stack.archiveOrders().insertMany(List.of(order(202, NOW.minus(Duration.ofHours(5)), "archived"),
                order(203, NOW.minus(Duration.ofHours(5)), "archived")));
        MongoBulkWriteException e = catchThrowableOfType(MongoBulkWriteException.class, () -> stack.orders().insertMany(
                List.of(order(202, NOW, "dup"), order(3000, NOW, "new"), order(203, NOW, "dup"), order(3001, NOW, "new")),
                new InsertManyOptions().ordered(false)));
        assertThat(e).isNotNull();
        assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(2);
        assertThat(e.getWriteErrors()).extracting(BulkWriteError::getIndex).containsExactly(0, 2);
        assertThat(exists(3000)).isTrue();
        assertThat(exists(3001)).isTrue();
    }

    /** An updateMany over more cold documents than one transaction should hold runs in several, with exact counts. */
    @Test
    void hugeUpdateManyIsSplitIntoTransactionsOfAtMostAThousandDocuments() throws Exception {
        List<BsonDocument> docs = new java.util.ArrayList<>();
        for (int i = 0; i < 2_500; i++) {
            docs.add(order(50_000 + i, NOW.minus(Duration.ofHours(5)), "huge"));
        }
        stack.archiveOrders().insertMany(docs);
        java.util.Map<String, java.util.Set<org.bson.BsonValue>> perTransaction = new java.util.concurrent.ConcurrentHashMap<>();
        try (var stream = stack.fastOrders().watch(BsonDocument.class).cursor()) {
            var result = stack.orders().updateMany(Filters.eq("state", "huge"), com.mongodb.client.model.Updates.set("state", "huge-done"));
            assertThat(result.getMatchedCount()).isEqualTo(2_500);
            assertThat(result.getModifiedCount()).isEqualTo(2_500);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            int seen = 0;
            while (seen < 5_000 && System.nanoTime() < deadline) {
                var event = stream.tryNext();
                if (event == null) {
                    continue;
                }
                seen++;
                if (event.getTxnNumber() != null && event.getLsid() != null) {
                    perTransaction.computeIfAbsent(event.getLsid().toJson() + "/" + event.getTxnNumber().getValue(),
                            k -> new java.util.HashSet<>()).add(event.getDocumentKey().get("_id"));
                }
            }
        }
        assertThat(stack.orders().countDocuments(Filters.eq("state", "huge-done"))).isEqualTo(2_500);
        assertThat(perTransaction).as("the update ran in several transactions").hasSizeGreaterThanOrEqualTo(3);
        assertThat(perTransaction.values()).allSatisfy(ids -> assertThat(ids).hasSizeLessThanOrEqualTo(1_000));
    }

    @Test
    void anUpdateTooLargeToSplitIsRefusedBeforeChangingAnything() {
        List<BsonDocument> docs = new java.util.ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            docs.add(order(60_000 + i, NOW.minus(Duration.ofHours(5)), "too-large"));
        }
        stack.archiveOrders().insertMany(docs);
        com.mongodb.MongoException e = catchThrowableOfType(com.mongodb.MongoException.class, () -> stack.orders().bulkWrite(List.of(
                new com.mongodb.client.model.UpdateManyModel<>(Filters.eq("state", "too-large"), com.mongodb.client.model.Updates.set("x", 1)),
                new com.mongodb.client.model.UpdateManyModel<>(Filters.eq("state", "too-large"), com.mongodb.client.model.Updates.set("y", 1)))));
        assertThat(e).isNotNull();
        assertThat(e.getCode()).isEqualTo(257);
        assertThat(e.getMessage()).contains("narrow the filter").contains("createdAt");
        assertThat(stack.archiveOrders().countDocuments(Filters.exists("x"))).isZero();
        assertThat(stack.fastOrders().countDocuments(Filters.eq("state", "too-large"))).as("nothing promoted either").isZero();
    }
}
