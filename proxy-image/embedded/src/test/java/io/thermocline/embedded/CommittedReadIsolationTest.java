package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Readers outside a transaction (change streams' {@code updateLookup}, find, distinct) and other
 * transactions see committed data only: never the writes of a transaction that is still open (and
 * may abort), and a transaction's writes as soon as its commit returns. The feeder relies on the
 * lookup: one that saw an eviction's uncommitted delete mirrored nothing, and when the eviction
 * aborted, the update was lost.
 */
class CommittedReadIsolationTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;
    private MongoCollection<Document> coll;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.startSingle();
        client = MongoClients.create(rs.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    @BeforeEach
    void seed(TestInfo info) {
        coll = client.getDatabase("iso")
                .getCollection(info.getTestMethod().orElseThrow().getName());
        coll.insertMany(List.of(new Document("_id", 1).append("v", 0), new Document("_id", 2).append("v", 0)));
    }

    @Test
    void updateLookupReturnsTheCommittedVersionWhileAnOpenTransactionHoldsTheDocument() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                        coll.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor();
                ClientSession session = client.startSession()) {
            coll.updateOne(Filters.eq("_id", 1), Updates.set("v", 1));
            coll.updateOne(Filters.eq("_id", 2), Updates.set("v", 1));
            session.startTransaction();
            coll.deleteOne(session, Filters.eq("_id", 1));
            coll.updateOne(session, Filters.eq("_id", 2), Updates.set("v", 99));

            ChangeStreamDocument<Document> first = stream.next();
            ChangeStreamDocument<Document> second = stream.next();
            assertThat(first.getFullDocument()).isEqualTo(new Document("_id", 1).append("v", 1));
            assertThat(second.getFullDocument()).isEqualTo(new Document("_id", 2).append("v", 1));
            session.abortTransaction();
        }
        assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                .isEqualTo(List.of(new Document("_id", 1).append("v", 1), new Document("_id", 2).append("v", 1)));
    }

    @Test
    void updateLookupOfACommittedTransactionsUpdateReturnsItsVersion() throws Exception {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                        coll.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor();
                ClientSession session = client.startSession()) {
            for (int round = 1; round <= 30; round++) {
                // the stream waits on the server while the transaction commits: its lookup runs right at the commit
                CompletableFuture<ChangeStreamDocument<Document>> event = CompletableFuture.supplyAsync(stream::next);
                session.startTransaction();
                coll.updateOne(session, Filters.eq("_id", 1), Updates.set("v", round));
                session.commitTransaction();
                assertThat(event.get(10, TimeUnit.SECONDS).getFullDocument())
                        .as("round %d", round)
                        .isEqualTo(new Document("_id", 1).append("v", round));
                assertThat(coll.find(Filters.eq("_id", 1)).first())
                        .isEqualTo(new Document("_id", 1).append("v", round));
            }
        }
    }

    @Test
    void updateLookupAfterAnAbortedDeleteReturnsTheDocument() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                        coll.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor();
                ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.deleteOne(session, Filters.eq("_id", 1));
            session.abortTransaction();
            coll.updateOne(Filters.eq("_id", 1), Updates.set("v", 7));
            assertThat(stream.next().getFullDocument()).isEqualTo(new Document("_id", 1).append("v", 7));
        }
    }

    @Test
    void distinctOutsideATransactionSeesOnlyCommittedValues() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.updateOne(session, Filters.eq("_id", 1), Updates.set("v", 5));
            coll.insertOne(session, new Document("_id", 3).append("v", 6));
            assertThat(coll.distinct("v", Integer.class).into(new ArrayList<>()))
                    .containsExactly(0);
            assertThat(coll.distinct("v", Filters.gte("_id", 1), Integer.class).into(new ArrayList<>()))
                    .containsExactly(0);
            assertThat(coll.distinct(session, "v", Integer.class).into(new ArrayList<>()))
                    .containsExactlyInAnyOrder(0, 5, 6);
            session.commitTransaction();
        }
        assertThat(coll.distinct("v", Integer.class).into(new ArrayList<>())).containsExactlyInAnyOrder(0, 5, 6);
    }

    @Test
    void aTransactionReadsTheCommittedVersionOfADocumentAnotherTransactionDeletedAndCannotWriteIt() {
        try (ClientSession evictor = client.startSession();
                ClientSession writer = client.startSession()) {
            evictor.startTransaction();
            coll.deleteOne(evictor, Filters.eq("_id", 1));

            writer.startTransaction();
            assertThat(coll.find(writer, Filters.eq("_id", 1)).first())
                    .isEqualTo(new Document("_id", 1).append("v", 0));
            MongoException update = catchThrowableOfType(
                    MongoException.class, () -> coll.updateOne(writer, Filters.eq("_id", 1), Updates.set("v", 1)));
            assertThat(update.getCode()).isEqualTo(112);
            assertThat(update.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                    .isTrue();
            writer.abortTransaction();
            evictor.abortTransaction();
        }
        assertThat(coll.find(Filters.eq("_id", 1)).first()).isEqualTo(new Document("_id", 1).append("v", 0));
    }

    @Test
    void aWriteOutsideTransactionsWaitsForATransactionThatDeletedAMatchingDocument() throws Exception {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.deleteOne(session, Filters.eq("_id", 1));
            long waitsBefore = rs.writesThatWaitedForATransaction();
            CompletableFuture<Long> update = CompletableFuture.supplyAsync(() ->
                    coll.updateMany(Filters.gte("v", 0), Updates.inc("v", 10)).getModifiedCount());
            // positive signal: the write reached the member and waits for the transaction (no sleep hoping so)
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
            while (rs.writesThatWaitedForATransaction() == waitsBefore && !update.isDone()) {
                assertThat(System.nanoTime()).as("the write reached the member").isLessThan(deadline);
                Thread.sleep(5);
            }
            assertThat(update).isNotDone();
            session.abortTransaction();
            assertThat(update.get(10, TimeUnit.SECONDS)).isEqualTo(2);
        }
        assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                .isEqualTo(List.of(new Document("_id", 1).append("v", 10), new Document("_id", 2).append("v", 10)));
    }

    /**
     * A transaction's multi-document statement changes storage one document at a time, each with its staging, so a
     * read outside the transaction waits for one document at most: it ran while the statement's whole run held every
     * read of the member (on the on-disk engine a 1,000-document copy-up by the proxy kept the feeder's and the
     * evictor's reads waiting 30 s, the README's whole-collection updateMany).
     */
    @Test
    void aReadWhileATransactionsMultiDocumentUpdateIsHeldBetweenDocumentsSeesTheCommittedVersions() throws Exception {
        io.thermocline.embedded.member.Member primary = rs.primary();
        long heldBefore = rs.documentWritesHeld();
        rs.holdWritesAfterDocuments(primary, 1);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newSingleThreadExecutor();
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            var update = threads.submit(() -> coll.updateMany(session, Filters.eq("v", 0), Updates.set("v", 5))
                    .getModifiedCount());
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(20))
                    .until(() -> rs.documentWritesHeld() > heldBefore || update.isDone()); // its second document waits
            assertThat(update.isDone())
                    .as("the statement stopped after its first document")
                    .isFalse();
            assertThat(values(coll.find().maxTime(5, java.util.concurrent.TimeUnit.SECONDS)))
                    .as("a read outside the transaction, while it is held")
                    .containsExactly(0, 0);
            rs.holdWritesAfterDocuments(primary, -1);
            assertThat(update.get(20, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(2L);
            session.commitTransaction();
            assertThat(values(coll.find())).containsExactly(5, 5);
        } finally {
            rs.holdWritesAfterDocuments(primary, -1);
            threads.shutdownNow();
        }
    }

    private static List<Integer> values(com.mongodb.client.FindIterable<Document> found) {
        return found.sort(new Document("_id", 1)).map(d -> d.getInteger("v")).into(new java.util.ArrayList<>());
    }
}
