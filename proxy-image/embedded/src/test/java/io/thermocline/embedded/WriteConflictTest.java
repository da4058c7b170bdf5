package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Two transactions writing one document: the second gets WriteConflict (112), labelled transient, for every write kind. */
class WriteConflictTest {

    @Test
    void deleteAndUpdateConflictingWithAnOpenTransactionAreTransientWriteConflicts() {
        try (EmbeddedReplicaSet set = EmbeddedReplicaSet.startSingle();
                MongoClient client = MongoClients.create(set.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("conflict").getCollection("docs");
            c.insertOne(new Document("_id", 1).append("v", 0));
            try (ClientSession first = client.startSession();
                    ClientSession second = client.startSession()) {
                first.startTransaction();
                c.updateOne(first, Filters.eq("_id", 1), Updates.set("v", 1));

                second.startTransaction();
                MongoException delete =
                        catchThrowableOfType(MongoException.class, () -> c.deleteOne(second, Filters.eq("_id", 1)));
                assertThat(delete.getCode()).isEqualTo(112);
                assertThat(delete.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                        .isTrue();
                second.abortTransaction();

                second.startTransaction();
                MongoException update = catchThrowableOfType(
                        MongoException.class, () -> c.updateOne(second, Filters.eq("_id", 1), Updates.set("v", 2)));
                assertThat(update.getCode()).isEqualTo(112);
                assertThat(update.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                        .isTrue();
                second.abortTransaction();
                first.commitTransaction();
            }
            assertThat(c.find(Filters.eq("_id", 1)).first().getInteger("v")).isEqualTo(1);
        }
    }

    /**
     * A document another open transaction inserted and removed again is still that transaction's write:
     * an upsert of the same _id (by update, replace or findAndModify) meets it as on MongoDB, with WriteConflict.
     */
    @Test
    void upsertOfAnIdAnOpenTransactionInsertedAndRemovedIsAWriteConflict() {
        try (EmbeddedReplicaSet set = EmbeddedReplicaSet.startSingle();
                MongoClient client = MongoClients.create(set.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("conflict").getCollection("claims");
            c.insertOne(new Document("_id", "other"));
            try (ClientSession first = client.startSession();
                    ClientSession second = client.startSession()) {
                first.startTransaction();
                c.updateOne(
                        first,
                        Filters.eq("_id", 7),
                        Updates.set("claim", 1),
                        new com.mongodb.client.model.UpdateOptions().upsert(true));
                c.deleteOne(first, Filters.eq("_id", 7));

                second.startTransaction();
                MongoException update = catchThrowableOfType(
                        MongoException.class,
                        () -> c.updateOne(
                                second,
                                Filters.eq("_id", 7),
                                Updates.set("v", 2),
                                new com.mongodb.client.model.UpdateOptions().upsert(true)));
                assertThat(update.getCode()).isEqualTo(112);
                assertThat(update.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                        .isTrue();
                second.abortTransaction();

                second.startTransaction();
                MongoException replace = catchThrowableOfType(
                        MongoException.class,
                        () -> c.replaceOne(
                                second,
                                Filters.eq("_id", 7),
                                new Document("v", 3),
                                new com.mongodb.client.model.ReplaceOptions().upsert(true)));
                assertThat(replace.getCode()).isEqualTo(112);
                second.abortTransaction();

                second.startTransaction();
                MongoException findAndModify = catchThrowableOfType(
                        MongoException.class,
                        () -> c.findOneAndUpdate(
                                second,
                                Filters.eq("_id", 7),
                                Updates.set("v", 4),
                                new com.mongodb.client.model.FindOneAndUpdateOptions().upsert(true)));
                assertThat(findAndModify.getCode()).isEqualTo(112);
                second.abortTransaction();
                first.commitTransaction();
            }
            assertThat(c.find(Filters.eq("_id", 7)).first()).isNull();
        }
    }

    /**
     * A unique key an open transaction freed (it changed the document holding it) stays that transaction's until it ends,
     * as in MongoDB's index: another transaction giving a document the key gets WriteConflict, a plain insert waits and,
     * once the first transaction aborts and the key is back, is refused with E11000. Before, both were acknowledged and
     * the abort failed to restore the first document (the history checker saw one key acknowledged for two documents).
     */
    @Test
    void aUniqueKeyAnOpenTransactionFreedIsHeldUntilItEnds() throws Exception {
        try (EmbeddedReplicaSet set = EmbeddedReplicaSet.startSingle();
                MongoClient client = MongoClients.create(set.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("conflict").getCollection("skus");
            c.createIndex(new Document("sku", 1), new com.mongodb.client.model.IndexOptions().unique(true));
            c.insertOne(new Document("_id", 1).append("sku", "K0"));
            c.insertOne(new Document("_id", 2).append("sku", "K5"));
            try (ClientSession first = client.startSession();
                    ClientSession second = client.startSession()) {
                first.startTransaction();
                c.updateOne(first, Filters.eq("_id", 1), Updates.set("sku", "K8")); // K0 free in storage, held by first

                second.startTransaction();
                MongoException insert = catchThrowableOfType(
                        MongoException.class, () -> c.insertOne(second, new Document("_id", 3).append("sku", "K0")));
                assertThat(insert.getCode()).isEqualTo(112);
                assertThat(insert.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                        .isTrue();
                second.abortTransaction();

                second.startTransaction();
                MongoException update = catchThrowableOfType(
                        MongoException.class,
                        () -> c.updateOne(second, Filters.eq("_id", 2), Updates.set("sku", "K0")));
                assertThat(update.getCode()).isEqualTo(112);
                second.abortTransaction();
                second.startTransaction();
                MongoException findAndModify = catchThrowableOfType(
                        MongoException.class,
                        () -> c.findOneAndUpdate(second, Filters.eq("_id", 2), Updates.set("sku", "K0")));
                assertThat(findAndModify.getCode()).isEqualTo(112);
                second.abortTransaction();
                assertThat(c.find(Filters.eq("_id", 2)).first().getString("sku"))
                        .as("the conflicting updates undone")
                        .isEqualTo("K5");

                long waitsBefore = set.writesThatWaitedForATransaction();
                java.util.concurrent.CompletableFuture<Throwable> plain =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                            try {
                                c.insertOne(new Document("_id", 4).append("sku", "K0"));
                                return null;
                            } catch (RuntimeException e) {
                                return e;
                            }
                        });
                // the plain insert waits for the first transaction; it is ended only once the insert has reached the
                // server
                long deadline =
                        System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
                while (!plain.isDone() && set.writesThatWaitedForATransaction() == waitsBefore) {
                    assertThat(System.nanoTime())
                            .as("the plain insert reached the server")
                            .isLessThan(deadline);
                    Thread.sleep(5);
                }
                assertThat(plain)
                        .as("waiting for the transaction that holds K0")
                        .isNotDone();
                first.abortTransaction();
                Throwable refused = plain.get(30, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(refused).isInstanceOf(com.mongodb.MongoWriteException.class);
                assertThat(((com.mongodb.MongoWriteException) refused).getCode())
                        .isEqualTo(11000);
            }
            assertThat(c.find(Filters.eq("sku", "K0")).into(new java.util.ArrayList<>()))
                    .as("K0 back on its holder, once")
                    .extracting(d -> d.getInteger("_id"))
                    .containsExactly(1);
        }
    }
}
