package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Snapshot isolation as MongoDB gives it: a transaction reads the snapshot taken at its first
 * statement, and a write of a document that another transaction or a plain write committed after
 * that snapshot is a WriteConflict (112, TransientTransactionError) that aborts the transaction
 * (first committer wins), whatever the write kind and however the document is found.
 */
class SnapshotIsolationTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;
    private MongoCollection<Document> coll;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().name("si").members(3).build().start();
        client = MongoClients.create(rs.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    @BeforeEach
    void seed(TestInfo info) {
        coll = client.getDatabase("si").getCollection(info.getTestMethod().orElseThrow().getName());
        coll.insertMany(List.of(new Document("_id", "x").append("v", 1), new Document("_id", "y").append("v", 1)));
    }

    /** Starts a transaction on the session and runs its first statement (a read), which takes the snapshot. */
    private void begin(ClientSession session) {
        session.startTransaction();
        assertThat(coll.find(session, Filters.eq("_id", "y")).first()).isNotNull();
    }

    private static void assertTransientWriteConflict(MongoException e) {
        assertThat(e).as("a write conflict").isNotNull();
        assertThat(e.getCode()).isEqualTo(112);
        assertThat(e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)).isTrue();
    }

    /** The transaction is gone after its conflict: commit fails with NoSuchTransaction, nothing of it is left. */
    private void assertAborted(ClientSession session) {
        MongoException commit = catchThrowableOfType(MongoException.class, session::commitTransaction);
        assertThat(commit).as("commit after a write conflict").isNotNull();
        assertThat(commit.getCode()).isEqualTo(251);
    }

    private void conflictsAfterAConcurrentCommit(Consumer<ClientSession> concurrentWrite, Consumer<ClientSession> write) {
        try (ClientSession mine = client.startSession(); ClientSession other = client.startSession()) {
            begin(mine);
            concurrentWrite.accept(other);
            assertTransientWriteConflict(catchThrowableOfType(MongoException.class, () -> write.accept(mine)));
            assertAborted(mine);
        }
    }

    private void committedInATransaction(ClientSession other, Runnable write) {
        other.startTransaction();
        write.run();
        other.commitTransaction();
    }

    @Test
    void updatingADocumentAnotherTransactionCommittedAfterTheSnapshotIsAWriteConflict() {
        conflictsAfterAConcurrentCommit(
            other -> committedInATransaction(other, () -> coll.updateOne(other, Filters.eq("_id", "x"), Updates.set("v", 2))),
            mine -> coll.updateOne(mine, Filters.eq("_id", "x"), Updates.set("v", 3)));
        assertThat(coll.find(Filters.eq("_id", "x")).first().getInteger("v")).isEqualTo(2);
    }

    @Test
    void updatingADocumentAPlainWriteChangedAfterTheSnapshotIsAWriteConflict() {
        conflictsAfterAConcurrentCommit(
            other -> coll.updateOne(Filters.eq("_id", "x"), Updates.set("v", 2)),
            mine -> coll.updateOne(mine, Filters.eq("_id", "x"), Updates.inc("v", 10)));
        assertThat(coll.find(Filters.eq("_id", "x")).first().getInteger("v")).isEqualTo(2);
    }

    @Test
    void deletingADocumentThatWasDeletedAfterTheSnapshotIsAWriteConflict() {
        conflictsAfterAConcurrentCommit(
            other -> coll.deleteOne(Filters.eq("_id", "x")),
            mine -> coll.deleteOne(mine, Filters.eq("_id", "x")));
    }

    @Test
    void anUpdateByAFilterTheSnapshotVersionMatchedIsAWriteConflictWhenTheDocumentChangedSince() {
        conflictsAfterAConcurrentCommit(
            other -> coll.updateOne(Filters.eq("_id", "x"), Updates.set("v", 5)),
            mine -> coll.updateMany(mine, Filters.eq("v", 1), Updates.set("seen", true)));
        assertThat(coll.countDocuments(Filters.exists("seen"))).isZero();
    }

    @Test
    void insertingAnIdAnotherTransactionInsertedAfterTheSnapshotIsAWriteConflict() {
        conflictsAfterAConcurrentCommit(
            other -> committedInATransaction(other, () -> coll.insertOne(other, new Document("_id", "fence").append("by", "other"))),
            mine -> coll.updateOne(mine, Filters.eq("_id", "fence"), Updates.set("by", "mine"), new UpdateOptions().upsert(true)));
        assertThat(coll.find(Filters.eq("_id", "fence")).first().getString("by")).isEqualTo("other");
    }

    @Test
    void aWriteConflictAbortsTheTransactionAndUndoesItsEarlierWrites() {
        try (ClientSession mine = client.startSession()) {
            begin(mine);
            coll.insertOne(mine, new Document("_id", "earlier"));
            coll.updateOne(Filters.eq("_id", "x"), Updates.set("v", 2));
            assertTransientWriteConflict(catchThrowableOfType(MongoException.class,
                () -> coll.updateOne(mine, Filters.eq("_id", "x"), Updates.set("v", 3))));
            assertAborted(mine);
        }
        assertThat(coll.countDocuments(Filters.eq("_id", "earlier"))).isZero();
        coll.insertOne(new Document("_id", "earlier"));
    }

    @Test
    void documentsChangedAfterTheSnapshotByOthersDoNotConflictWhenTheTransactionLeavesThemAlone() {
        try (ClientSession mine = client.startSession()) {
            begin(mine);
            coll.updateOne(Filters.eq("_id", "y"), Updates.set("v", 2));
            coll.insertOne(new Document("_id", "z"));
            coll.updateOne(mine, Filters.eq("_id", "x"), Updates.set("v", 3));
            mine.commitTransaction();
        }
        assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>())).containsExactly(
            new Document("_id", "x").append("v", 3), new Document("_id", "y").append("v", 2), new Document("_id", "z"));
    }

    @Test
    void aTransactionReadsItsSnapshotNotWhatOthersCommittedSince() {
        try (ClientSession mine = client.startSession()) {
            begin(mine);
            assertThat(coll.find(mine, Filters.eq("_id", "x")).first().getInteger("v")).isEqualTo(1);
            coll.updateOne(Filters.eq("_id", "x"), Updates.set("v", 2));
            coll.insertOne(new Document("_id", "z").append("v", 1));
            coll.deleteOne(Filters.eq("_id", "y"));
            assertThat(coll.find(mine, Filters.eq("_id", "x")).first().getInteger("v")).isEqualTo(1);
            assertThat(coll.countDocuments(mine, Filters.eq("v", 1))).isEqualTo(2);
            assertThat(coll.find(mine).sort(new Document("_id", 1)).map(d -> d.getString("_id")).into(new ArrayList<>()))
                .containsExactly("x", "y");
            mine.commitTransaction();
        }
        assertThat(coll.find(Filters.eq("_id", "x")).first().getInteger("v")).isEqualTo(2);
    }

    /** The race the guards rely on: concurrent read-modify-write transactions, retried by the driver, lose no increment. */
    @Test
    void concurrentReadModifyWriteTransactionsLoseNoIncrement() throws Exception {
        int threads = 4;
        int increments = 25;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < increments; i++) {
                        try (ClientSession session = client.startSession()) {
                            session.withTransaction(() -> {
                                int v = coll.find(session, Filters.eq("_id", "x")).first().getInteger("v");
                                coll.updateOne(session, Filters.eq("_id", "x"), Updates.set("v", v + 1));
                                return null;
                            });
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(coll.find(Filters.eq("_id", "x")).first().getInteger("v")).isEqualTo(1 + threads * increments);
    }
}
