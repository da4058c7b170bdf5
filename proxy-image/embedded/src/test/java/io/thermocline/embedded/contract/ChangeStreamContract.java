package io.thermocline.embedded.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.OperationType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;

/**
 * Change-stream behaviour the project relies on, asserted identically against the embedded
 * replica set and a real MongoDB replica set: where they disagree, the embedded set is wrong.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ChangeStreamContract {
    private static final AtomicInteger NAMES = new AtomicInteger();

    protected MongoClient client;
    protected MongoDatabase db;
    protected MongoCollection<Document> coll;

    /** Starts the deployment under test and returns its connection string. */
    protected abstract String startDeployment();

    protected abstract void stopDeployment();

    @BeforeAll
    void connect() {
        client = MongoClients.create(startDeployment());
    }

    @AfterAll
    void disconnect() {
        if (client != null) {
            client.close();
        }
        stopDeployment();
    }

    @BeforeEach
    void freshCollection(TestInfo info) {
        String name = info.getTestMethod().orElseThrow().getName();
        db = client.getDatabase("cs" + NAMES.incrementAndGet());
        coll = db.getCollection(name);
        coll.insertOne(new Document("_id", "seed"));
        coll.deleteOne(Filters.eq("_id", "seed"));
    }

    private static <T> MongoChangeStreamCursor<ChangeStreamDocument<T>> open(ChangeStreamIterable<T> iterable) {
        return iterable.maxAwaitTime(200, TimeUnit.MILLISECONDS).cursor();
    }

    private static <T> ChangeStreamDocument<T> next(MongoChangeStreamCursor<ChangeStreamDocument<T>> cursor) {
        long deadline = System.currentTimeMillis() + 10_000;
        while (System.currentTimeMillis() < deadline) {
            ChangeStreamDocument<T> event = cursor.tryNext();
            if (event != null) {
                return event;
            }
        }
        throw new AssertionError("no change event within 10 s");
    }

    @Test
    void insertEventHasTheServerShape() {
        try (var cursor = open(coll.watch())) {
            coll.insertOne(new Document("_id", 1).append("a", "x"));
            ChangeStreamDocument<Document> event = next(cursor);
            assertThat(event.getOperationType()).isEqualTo(OperationType.INSERT);
            assertThat(event.getNamespace().getFullName()).isEqualTo(coll.getNamespace().getFullName());
            assertThat(event.getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 1}"));
            assertThat(event.getFullDocument()).isEqualTo(new Document("_id", 1).append("a", "x"));
            assertThat(event.getClusterTime()).isNotNull();
            assertThat(event.getWallTime()).isNotNull();
            assertThat(event.getResumeToken().containsKey("_data")).isTrue();
            assertThat(event.getUpdateDescription()).isNull();
            assertThat(event.getLsid()).isNull();
        }
    }

    @Test
    void updateEventDescribesTheChangeAndLooksUpTheDocumentOnRequest() {
        coll.insertOne(new Document("_id", 1).append("a", 1).append("b", 2).append("arr", List.of(1)));
        try (var plain = open(coll.watch()); var lookup = open(coll.watch().fullDocument(FullDocument.UPDATE_LOOKUP))) {
            coll.updateOne(Filters.eq("_id", 1), Updates.combine(Updates.set("a", 5), Updates.unset("b"), Updates.push("arr", 2)));
            ChangeStreamDocument<Document> event = next(plain);
            assertThat(event.getOperationType()).isEqualTo(OperationType.UPDATE);
            assertThat(event.getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 1}"));
            assertThat(event.getUpdateDescription().getUpdatedFields()).isEqualTo(BsonDocument.parse("{a: 5, 'arr.1': 2}"));
            assertThat(event.getUpdateDescription().getRemovedFields()).containsExactly("b");
            assertThat(event.getFullDocument()).isNull();
            ChangeStreamDocument<Document> looked = next(lookup);
            assertThat(looked.getFullDocument()).isEqualTo(new Document("_id", 1).append("a", 5).append("arr", List.of(1, 2)));
        }
    }

    /**
     * An event over the server's 16 MB limit (here: an update of a 9 MB field with updateLookup, so
     * the event carries 9 MB twice) fails the stream with BSONObjectTooLarge; a stream that projects
     * the large fields out passes the same event.
     */
    @Test
    void anEventOverSixteenMegabytesFailsTheStreamUnlessItsLargeFieldsAreProjectedOut() {
        String nineMegabytes = "x".repeat(9 * 1024 * 1024);
        coll.insertOne(new Document("_id", 1).append("blob", "small"));
        BsonDocument start = null;
        try (var probe = open(coll.watch())) {
            coll.updateOne(Filters.eq("_id", 1), Updates.set("n", 1));
            start = next(probe).getResumeToken();
        }
        coll.updateOne(Filters.eq("_id", 1), Updates.set("blob", nineMegabytes));
        coll.updateOne(Filters.eq("_id", 1), Updates.set("n", 2));
        BsonDocument resumeAt = start;
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> {
            try (var full = open(coll.watch().resumeAfter(resumeAt).fullDocument(FullDocument.UPDATE_LOOKUP))) {
                next(full);
            }
        }).isInstanceOf(com.mongodb.MongoException.class)
                .satisfies(e -> assertThat(((com.mongodb.MongoException) e).getCode()).isEqualTo(10334));
        try (var lean = open(coll.watch(List.of(Aggregates.project(Projections.exclude("fullDocument", "updateDescription"))))
                .resumeAfter(resumeAt))) {
            ChangeStreamDocument<Document> big = next(lean);
            assertThat(big.getOperationType()).isEqualTo(OperationType.UPDATE);
            assertThat(big.getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 1}"));
            assertThat(big.getUpdateDescription()).isNull();
            assertThat(next(lean).getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 1}"));
        }
    }

    @Test
    void replaceAndDeleteEvents() {
        coll.insertOne(new Document("_id", 1).append("a", 1));
        try (var cursor = open(coll.watch())) {
            coll.replaceOne(Filters.eq("_id", 1), new Document("z", 9));
            coll.deleteOne(Filters.eq("_id", 1));
            ChangeStreamDocument<Document> replace = next(cursor);
            assertThat(replace.getOperationType()).isEqualTo(OperationType.REPLACE);
            assertThat(replace.getFullDocument()).isEqualTo(new Document("_id", 1).append("z", 9));
            assertThat(replace.getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 1}"));
            ChangeStreamDocument<Document> delete = next(cursor);
            assertThat(delete.getOperationType()).isEqualTo(OperationType.DELETE);
            assertThat(delete.getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 1}"));
            assertThat(delete.getFullDocument()).isNull();
        }
    }

    @Test
    void findAndModifyUpsertAndMultiUpdateEmitOneEventPerDocument() {
        coll.insertMany(List.of(new Document("_id", 1).append("g", 1), new Document("_id", 2).append("g", 1)));
        try (var cursor = open(coll.watch())) {
            coll.updateMany(Filters.eq("g", 1), Updates.inc("n", 1));
            coll.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("f", true));
            coll.updateOne(Filters.eq("_id", 3), Updates.set("u", 1), new com.mongodb.client.model.UpdateOptions().upsert(true));
            coll.findOneAndDelete(Filters.eq("_id", 2));
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ChangeStreamDocument<Document> e = next(cursor);
                seen.add(e.getOperationType().getValue() + ":" + e.getDocumentKey().get("_id").asInt32().getValue());
            }
            assertThat(seen).containsExactly("update:1", "update:2", "update:1", "insert:3", "delete:2");
        }
    }

    @Test
    void dropInvalidatesACollectionStreamAndStartAfterContinues() {
        BsonDocument invalidateToken;
        try (var cursor = open(coll.watch())) {
            coll.insertOne(new Document("_id", 1));
            coll.drop();
            assertThat(next(cursor).getOperationType()).isEqualTo(OperationType.INSERT);
            ChangeStreamDocument<Document> drop = next(cursor);
            assertThat(drop.getOperationType()).isEqualTo(OperationType.DROP);
            assertThat(drop.getNamespace().getFullName()).isEqualTo(coll.getNamespace().getFullName());
            ChangeStreamDocument<Document> invalidate = next(cursor);
            assertThat(invalidate.getOperationType()).isEqualTo(OperationType.INVALIDATE);
            invalidateToken = invalidate.getResumeToken();
        }
        try (var cursor = open(coll.watch().startAfter(invalidateToken))) {
            coll.insertOne(new Document("_id", 2));
            ChangeStreamDocument<Document> event = next(cursor);
            assertThat(event.getOperationType()).isEqualTo(OperationType.INSERT);
            assertThat(event.getDocumentKey()).isEqualTo(BsonDocument.parse("{_id: 2}"));
        }
    }

    @Test
    void renameReportsTheTargetAndInvalidatesTheCollectionStream() {
        coll.insertOne(new Document("_id", 1));
        com.mongodb.MongoNamespace target = new com.mongodb.MongoNamespace(db.getName(), coll.getNamespace().getCollectionName() + "_renamed");
        try (var cursor = open(coll.watch())) {
            coll.renameCollection(target);
            ChangeStreamDocument<Document> rename = next(cursor);
            assertThat(rename.getOperationType()).isEqualTo(OperationType.RENAME);
            assertThat(rename.getNamespace().getFullName()).isEqualTo(coll.getNamespace().getFullName());
            assertThat(rename.getDestinationNamespace()).isEqualTo(target);
            assertThat(next(cursor).getOperationType()).isEqualTo(OperationType.INVALIDATE);
        }
    }

    @Test
    void dropDatabaseReportsEachCollectionThenTheDatabaseAndInvalidatesADatabaseStream() {
        coll.insertOne(new Document("_id", 1));
        try (var cursor = open(db.watch())) {
            db.drop();
            ChangeStreamDocument<Document> drop = next(cursor);
            assertThat(drop.getOperationType()).isEqualTo(OperationType.DROP);
            assertThat(drop.getNamespace().getFullName()).isEqualTo(coll.getNamespace().getFullName());
            ChangeStreamDocument<Document> dropDatabase = next(cursor);
            assertThat(dropDatabase.getOperationType()).isEqualTo(OperationType.DROP_DATABASE);
            assertThat(dropDatabase.getDatabaseName()).isEqualTo(db.getName());
            assertThat(next(cursor).getOperationType()).isEqualTo(OperationType.INVALIDATE);
        }
    }

    @Test
    void resumingInsideATransactionDeliversItsRemainingEvents() {
        BsonDocument firstOfTransaction;
        try (var cursor = open(coll.watch()); ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                coll.insertOne(session, new Document("_id", 1));
                coll.insertOne(session, new Document("_id", 2));
                coll.insertOne(session, new Document("_id", 3));
                return null;
            });
            firstOfTransaction = next(cursor).getResumeToken();
        }
        try (var cursor = open(coll.watch().resumeAfter(firstOfTransaction))) {
            assertThat(next(cursor).getDocumentKey().getInt32("_id").getValue()).isEqualTo(2);
            assertThat(next(cursor).getDocumentKey().getInt32("_id").getValue()).isEqualTo(3);
        }
    }

    @Test
    void databaseStreamSeesEveryCollectionOfItsDatabaseOnly() {
        MongoCollection<Document> other = db.getCollection(coll.getNamespace().getCollectionName() + "_other");
        MongoCollection<Document> elsewhere = client.getDatabase(db.getName() + "x").getCollection("c");
        try (var cursor = open(db.watch())) {
            elsewhere.insertOne(new Document("_id", "elsewhere"));
            coll.insertOne(new Document("_id", "a"));
            other.insertOne(new Document("_id", "b"));
            assertThat(next(cursor).getDocumentKey().getString("_id").getValue()).isEqualTo("a");
            ChangeStreamDocument<Document> second = next(cursor);
            assertThat(second.getDocumentKey().getString("_id").getValue()).isEqualTo("b");
            assertThat(second.getNamespace().getCollectionName()).isEqualTo(other.getNamespace().getCollectionName());
        }
    }

    @Test
    void clusterStreamSeesEveryDatabase() {
        MongoCollection<Document> elsewhere = client.getDatabase(db.getName() + "y").getCollection("c");
        try (var cursor = open(client.watch())) {
            coll.insertOne(new Document("_id", "a"));
            elsewhere.insertOne(new Document("_id", "b"));
            List<String> namespaces = new ArrayList<>();
            while (namespaces.size() < 2) {
                ChangeStreamDocument<Document> e = next(cursor);
                if (e.getNamespace() != null && e.getNamespace().getDatabaseName().startsWith(db.getName())) {
                    namespaces.add(e.getNamespace().getFullName());
                }
            }
            assertThat(namespaces).containsExactly(coll.getNamespace().getFullName(), elsewhere.getNamespace().getFullName());
        }
    }

    @Test
    void transactionEventsCarryTheSessionAndShareOneClusterTime() {
        try (var cursor = open(coll.watch()); ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                coll.insertOne(session, new Document("_id", 1));
                coll.insertOne(session, new Document("_id", 2));
                return null;
            });
            ChangeStreamDocument<Document> first = next(cursor);
            ChangeStreamDocument<Document> second = next(cursor);
            assertThat(first.getLsid().get("id")).isEqualTo(session.getServerSession().getIdentifier().get("id"));
            assertThat(first.getTxnNumber()).isNotNull();
            assertThat(second.getTxnNumber()).isEqualTo(first.getTxnNumber());
            assertThat(second.getClusterTime()).isEqualTo(first.getClusterTime());
            assertThat(second.getResumeToken()).isNotEqualTo(first.getResumeToken());
        }
    }

    @Test
    void resumeAfterAnEventTokenDeliversExactlyTheLaterEvents() {
        BsonDocument token;
        try (var cursor = open(coll.watch())) {
            coll.insertOne(new Document("_id", 1));
            token = next(cursor).getResumeToken();
        }
        coll.insertMany(List.of(new Document("_id", 2), new Document("_id", 3)));
        try (var cursor = open(coll.watch().resumeAfter(token))) {
            assertThat(next(cursor).getDocumentKey().getInt32("_id").getValue()).isEqualTo(2);
            assertThat(next(cursor).getDocumentKey().getInt32("_id").getValue()).isEqualTo(3);
        }
    }

    @Test
    void startAtOperationTimeIncludesTheEventAtThatTime() {
        BsonTimestamp second;
        try (var cursor = open(coll.watch())) {
            coll.insertOne(new Document("_id", 1));
            coll.insertOne(new Document("_id", 2));
            next(cursor);
            second = next(cursor).getClusterTime();
        }
        try (var cursor = open(coll.watch().startAtOperationTime(second))) {
            assertThat(next(cursor).getDocumentKey().getInt32("_id").getValue()).isEqualTo(2);
        }
    }

    @Test
    void postBatchResumeTokenOfAnEmptyBatchResumesWithoutLoss() {
        BsonDocument token;
        try (var cursor = open(coll.watch())) {
            assertThat(cursor.tryNext()).isNull();
            token = cursor.getResumeToken();
            assertThat(token).isNotNull();
        }
        coll.insertOne(new Document("_id", "after"));
        try (var cursor = open(coll.watch().resumeAfter(token))) {
            assertThat(next(cursor).getDocumentKey().getString("_id").getValue()).isEqualTo("after");
        }
    }

    @Test
    void stagesAfterChangeStreamFilterAndReshapeEvents() {
        var pipeline = List.of(Aggregates.match(Filters.in("operationType", List.of("delete"))),
            Aggregates.project(Projections.include("operationType", "documentKey")));
        try (var cursor = open(coll.watch(pipeline))) {
            coll.insertOne(new Document("_id", 1));
            coll.deleteOne(Filters.eq("_id", 1));
            ChangeStreamDocument<Document> event = next(cursor);
            assertThat(event.getOperationType()).isEqualTo(OperationType.DELETE);
            assertThat(event.getNamespace()).isNull();
            assertThat(event.getResumeToken()).isNotNull();
        }
    }
}
