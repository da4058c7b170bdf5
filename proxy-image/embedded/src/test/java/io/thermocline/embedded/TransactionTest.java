package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.embedded.member.Member;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

class TransactionTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;
    private MongoCollection<Document> coll;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().name("txn").members(3).build().start();
        client = MongoClients.create(rs.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    @BeforeEach
    void seed(TestInfo info) {
        coll = client.getDatabase("txn")
                .getCollection(info.getTestMethod().orElseThrow().getName());
        coll.insertMany(List.of(new Document("_id", "a").append("v", 1), new Document("_id", "b").append("v", 1)));
    }

    private List<Document> contentOn(Member member) {
        try (MongoClient direct = MongoClients.create(member.directConnectionString())) {
            return direct.getDatabase("txn")
                    .getCollection(coll.getNamespace().getCollectionName())
                    .find()
                    .sort(new Document("_id", 1))
                    .into(new ArrayList<>());
        }
    }

    @Test
    void aCommittedTransactionReachesEveryMemberWhole() {
        try (ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                coll.insertOne(session, new Document("_id", "c").append("v", 1));
                coll.updateOne(session, Filters.eq("_id", "a"), Updates.inc("v", 1));
                coll.deleteOne(session, Filters.eq("_id", "b"));
                return null;
            });
        }
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        List<Document> expected =
                List.of(new Document("_id", "a").append("v", 2), new Document("_id", "c").append("v", 1));
        for (Member m : rs.members()) {
            assertThat(contentOn(m)).isEqualTo(expected);
        }
    }

    @Test
    void secondariesSeeNothingOfATransactionBeforeItCommits() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.insertOne(session, new Document("_id", "c"));
            coll.updateOne(session, Filters.eq("_id", "a"), Updates.set("v", 9));
            rs.awaitReplication(Duration.ofSeconds(5));
            for (Member m : rs.secondaries()) {
                assertThat(contentOn(m)).extracting(d -> d.get("_id")).containsExactly("a", "b");
                assertThat(contentOn(m).get(0).getInteger("v")).isEqualTo(1);
            }
            session.commitTransaction();
        }
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        for (Member m : rs.secondaries()) {
            assertThat(contentOn(m)).extracting(d -> d.get("_id")).containsExactly("a", "b", "c");
        }
    }

    @Test
    void readersOutsideTheTransactionSeeOnlyCommittedStateWhileItsOwnReadsSeeItsWrites() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.insertOne(session, new Document("_id", "c").append("v", 1));
            coll.updateOne(session, Filters.eq("_id", "a"), Updates.set("v", 9));
            coll.deleteOne(session, Filters.eq("_id", "b"));
            assertThat(coll.find(session).sort(new Document("_id", 1)).into(new ArrayList<>()))
                    .isEqualTo(
                            List.of(new Document("_id", "a").append("v", 9), new Document("_id", "c").append("v", 1)));
            assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                    .isEqualTo(
                            List.of(new Document("_id", "a").append("v", 1), new Document("_id", "b").append("v", 1)));
            assertThat(coll.countDocuments(Filters.eq("v", 1))).isEqualTo(2);
            assertThat(coll.find(Filters.eq("_id", "c")).first()).isNull();
            session.commitTransaction();
        }
        assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                .isEqualTo(List.of(new Document("_id", "a").append("v", 9), new Document("_id", "c").append("v", 1)));
    }

    @Test
    void writesOutsideATransactionProceedOnOtherDocumentsAndWaitForItsOwn() throws Exception {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.updateOne(session, Filters.eq("_id", "a"), Updates.set("v", 2));
            coll.insertOne(new Document("_id", "outside"));
            coll.updateOne(Filters.eq("_id", "b"), Updates.set("v", 5));
            long waitsBefore = rs.writesThatWaitedForATransaction();
            java.util.concurrent.CompletableFuture<Void> blocked = java.util.concurrent.CompletableFuture.runAsync(
                    () -> coll.updateOne(Filters.eq("_id", "a"), Updates.inc("v", 10)));
            // positive signal: the write reached the member and waits for the transaction (no sleep hoping so)
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
            while (rs.writesThatWaitedForATransaction() == waitsBefore && !blocked.isDone()) {
                assertThat(System.nanoTime()).as("the write reached the member").isLessThan(deadline);
                Thread.sleep(5);
            }
            assertThat(blocked).isNotDone();
            session.commitTransaction();
            blocked.get(10, TimeUnit.SECONDS);
        }
        assertThat(coll.find(Filters.eq("_id", "a")).first().getInteger("v")).isEqualTo(12);
        assertThat(coll.find(Filters.eq("_id", "b")).first().getInteger("v")).isEqualTo(5);
        assertThat(coll.countDocuments(Filters.eq("_id", "outside"))).isEqualTo(1);
    }

    @Test
    void startingANewTransactionOnASessionAbortsItsUnfinishedOne() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.insertOne(session, new Document("_id", "unfinished"));
            org.bson.BsonDocument lsid = session.getServerSession().getIdentifier();
            long next = session.getServerSession().getTransactionNumber() + 1;
            client.getDatabase("txn")
                    .runCommand(new Document("insert", coll.getNamespace().getCollectionName())
                            .append("documents", List.of(new Document("_id", "next")))
                            .append("lsid", lsid)
                            .append("txnNumber", next)
                            .append("startTransaction", true)
                            .append("autocommit", false));
            client.getDatabase("admin")
                    .runCommand(new Document("commitTransaction", 1)
                            .append("lsid", lsid)
                            .append("txnNumber", next)
                            .append("autocommit", false));
        }
        assertThat(coll.find().map(d -> d.get("_id")).into(new ArrayList<>()))
                .containsExactlyInAnyOrder("a", "b", "next");
    }

    @Test
    void abortLeavesNoTraceInDataOrChangeStream() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                        coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor();
                ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.insertOne(session, new Document("_id", "c"));
            coll.updateOne(session, Filters.eq("_id", "a"), Updates.set("v", 9));
            coll.deleteOne(session, Filters.eq("_id", "b"));
            session.abortTransaction();
            coll.insertOne(new Document("_id", "marker"));
            ChangeStreamDocument<Document> first = null;
            for (int i = 0; i < 50 && first == null; i++) {
                first = stream.tryNext();
            }
            assertThat(first).isNotNull();
            assertThat(first.getDocumentKey().getString("_id").getValue()).isEqualTo("marker");
        }
        assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                .isEqualTo(List.of(
                        new Document("_id", "a").append("v", 1),
                        new Document("_id", "b").append("v", 1),
                        new Document("_id", "marker")));
    }

    @Test
    void aSecondTransactionWritingMeanwhileGetsATransientWriteConflict() {
        try (ClientSession first = client.startSession();
                ClientSession second = client.startSession()) {
            first.startTransaction();
            coll.updateOne(first, Filters.eq("_id", "a"), Updates.set("v", 2));
            second.startTransaction();
            assertThatThrownBy(() -> coll.updateOne(second, Filters.eq("_id", "a"), Updates.set("v", 3)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(112);
                        assertThat(e.hasErrorLabel("TransientTransactionError")).isTrue();
                    });
            second.abortTransaction();
            first.commitTransaction();
        }
        assertThat(coll.find(Filters.eq("_id", "a")).first().getInteger("v")).isEqualTo(2);
    }

    /** As on a server (SERVER-34059): a duplicate key inside a transaction aborts it; the write error is no transient error. */
    @Test
    void aDuplicateKeyAbortsTheTransactionAndItsLaterStatementsGetNoSuchTransaction() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.insertOne(session, new Document("_id", "c"));
            assertThatThrownBy(() -> coll.insertOne(session, new Document("_id", "a")))
                    .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(11000);
                        assertThat(e.hasErrorLabel("TransientTransactionError")).isFalse();
                    });
            assertThatThrownBy(() -> coll.updateOne(session, Filters.eq("_id", "b"), Updates.set("v", 2)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(251);
                        assertThat(e.hasErrorLabel("TransientTransactionError")).isTrue();
                    });
            assertThatThrownBy(session::commitTransaction).isInstanceOfSatisfying(MongoCommandException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(251);
                assertThat(e.hasErrorLabel("TransientTransactionError")).isTrue();
            });
        }
        // undone, and no longer held: a plain write of the same document goes through at once
        assertThat(coll.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                .isEqualTo(List.of(new Document("_id", "a").append("v", 1), new Document("_id", "b").append("v", 1)));
        coll.withTimeout(5, TimeUnit.SECONDS).insertOne(new Document("_id", "c"));
        assertThat(coll.countDocuments(Filters.eq("_id", "c"))).isEqualTo(1);
    }

    /** A command error (here a duplicate key raised by findAndModify's upsert) aborts the transaction too. */
    @Test
    void aCommandErrorAbortsTheTransactionWithoutATransientLabel() {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            coll.updateOne(session, Filters.eq("_id", "b"), Updates.set("v", 5));
            assertThatThrownBy(() -> coll.findOneAndUpdate(
                            session,
                            Filters.eq("v", 42),
                            Updates.set("_id", "a"),
                            new com.mongodb.client.model.FindOneAndUpdateOptions().upsert(true)))
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.hasErrorLabel("TransientTransactionError"))
                                    .isFalse());
            assertThatThrownBy(session::commitTransaction)
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(251));
        }
        assertThat(coll.find(Filters.eq("_id", "b")).first().getInteger("v")).isEqualTo(1);
    }

    @Test
    void anAbandonedTransactionExpiresAndIsRolledBack() throws InterruptedException {
        try (EmbeddedReplicaSet shortLived = EmbeddedReplicaSet.builder()
                        .name("expiry")
                        .transactionLifetime(Duration.ofMillis(500))
                        .build()
                        .start();
                MongoClient expiring = MongoClients.create(shortLived.connectionString());
                ClientSession session = expiring.startSession()) {
            MongoCollection<Document> c = expiring.getDatabase("txn").getCollection("expiry");
            session.startTransaction();
            c.insertOne(session, new Document("_id", "abandoned"));
            // positive signal: the transaction's own read is refused once the member aborted it (no sleep hoping so)
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!aborted(() -> c.countDocuments(session))) {
                assertThat(System.nanoTime()).as("the transaction expired").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThatThrownBy(session::commitTransaction)
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(251));
            assertThat(c.countDocuments(Filters.eq("_id", "abandoned"))).isZero();
            c.insertOne(new Document("_id", "writable"));
            assertThat(c.countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void anAbortedFindAndModifyUpsertLeavesNothingAndEveryReplySaysWhatItDid() {
        String name = coll.getNamespace().getCollectionName();
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            Document inTransaction = client.getDatabase("txn")
                    .runCommand(
                            session,
                            Document.parse("{findAndModify: '" + name
                                    + "', query: {_id: 77}, update: {$set: {sku: 'Z'}}, upsert: true}"));
            assertThat(inTransaction.get("lastErrorObject", Document.class))
                    .isEqualTo(Document.parse("{updatedExisting: false, n: 1, upserted: 77}"));
            session.abortTransaction();
        }
        assertThat(coll.find(Filters.eq("_id", 77)).first())
                .as("undone with the transaction")
                .isNull();
        Document outside = client.getDatabase("txn")
                .runCommand(Document.parse(
                        "{findAndModify: '" + name + "', query: {_id: 78}, update: {$set: {sku: 'Y'}}, upsert: true}"));
        assertThat(outside.get("lastErrorObject", Document.class))
                .isEqualTo(Document.parse("{updatedExisting: false, n: 1, upserted: 78}"));
        Document updated = client.getDatabase("txn")
                .runCommand(Document.parse(
                        "{findAndModify: '" + name + "', query: {_id: 78}, update: {$set: {sku: 'X'}}}"));
        assertThat(updated.get("lastErrorObject", Document.class))
                .isEqualTo(Document.parse("{updatedExisting: true, n: 1}"));
    }

    /** Whether a statement of the transaction gets NoSuchTransaction (251): the member aborted it. */
    private static boolean aborted(Runnable statement) {
        try {
            statement.run();
            return false;
        } catch (MongoCommandException e) {
            if (e.getErrorCode() == 251) {
                return true;
            }
            throw e;
        }
    }
}
