package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.replication.Durability;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A set kept on a disk that fills up acknowledges nothing it cannot keep, and says why it refuses writes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FullDiskTest {
    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedWriteSurvivesTheDiskFillingUpAndLaterWritesAreRefusedWithTheCause() {
        FullDisk disk = new FullDisk();
        List<Integer> acknowledged = new ArrayList<>();
        MongoException refused = null;
        try (EmbeddedReplicaSet rs = started(disk.storage(dir));
                MongoClient client = MongoClients.create(rs.connectionString() + "&retryWrites=false")) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            for (int i = 0; i < 200; i++) {
                if (i == 100) {
                    disk.fill();
                }
                try {
                    orders.insertOne(new Document("_id", i));
                    acknowledged.add(i);
                } catch (MongoException e) {
                    refused = e;
                }
            }
            assertThat(acknowledged).as("acknowledged before the disk filled").contains(0, 99);
            assertThat(refused).as("a write on the full disk").isNotNull();
            assertThat(rs.writesRefused())
                    .hasValueSatisfying(cause -> assertThat(cause).contains("disk full", dir.toString()));
            MongoException later = refused;
            assertThatThrownBy(() -> orders.insertOne(new Document("_id", 1000)))
                    .isInstanceOfSatisfying(MongoException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(Durability.REFUSED_CODE);
                        assertThat(e.getMessage()).contains("disk full");
                    });
            assertThat(later.getMessage()).contains("disk full");
        }
        disk.free();
        try (EmbeddedReplicaSet again = started(Storage.directory(dir));
                MongoClient client = MongoClients.create(again.connectionString())) {
            List<Integer> kept = new ArrayList<>();
            client.getDatabase("shop").getCollection("orders").find().forEach(d -> kept.add(d.getInteger("_id")));
            assertThat(kept).as("after a restart with space again").containsAll(acknowledged);
            assertThat(again.writesRefused()).isEmpty();
        }
    }

    /**
     * A flush on another thread may meet the full disk while a statement is between two of its documents: H2 closes
     * the store, and the statement's next document must be refused with the disk's cause, as every write after it,
     * never fail as an engine error ("This store is closed") that names no cause and that a client cannot act on.
     */
    @Test
    void aStatementRunningWhenAFlushMeetsTheFullDiskIsRefusedWithTheCause() throws Exception {
        FullDisk disk = new FullDisk();
        try (EmbeddedReplicaSet rs = started(disk.storage(dir));
                MongoClient client = MongoClients.create(rs.connectionString() + "&retryWrites=false")) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 0));
            rs.holdWritesAfterDocuments(rs.primary(), 1);
            java.util.concurrent.CompletableFuture<Void> statement = java.util.concurrent.CompletableFuture.runAsync(
                    () -> orders.insertMany(List.of(new Document("_id", 1), new Document("_id", 2))));
            await().atMost(Duration.ofSeconds(30)).until(() -> rs.documentWritesHeld() >= 1);
            disk.fill();
            // the first document is in the store and not yet on disk: the set's periodic flush (every second) meets the
            // full disk while the statement is between its documents, and H2 closes the store under it
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> rs.writesRefused().isPresent());
            rs.holdWritesAfterDocuments(rs.primary(), -1);
            assertThatThrownBy(() -> statement.get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(MongoException.class)
                    .cause()
                    .satisfies(e -> refusedForTheFullDisk((MongoException) e));
            assertThatThrownBy(() -> orders.insertOne(new Document("_id", 3)))
                    .isInstanceOfSatisfying(MongoException.class, FullDiskTest::refusedForTheFullDisk);
            assertThat(rs.writesRefused())
                    .hasValueSatisfying(cause -> assertThat(cause).contains("disk full"));
        }
        disk.free();
        try (EmbeddedReplicaSet again = started(Storage.directory(dir));
                MongoClient client = MongoClients.create(again.connectionString())) {
            assertThat(client.getDatabase("shop")
                            .getCollection("orders")
                            .find(new Document("_id", 0))
                            .first())
                    .as("acknowledged before the disk filled")
                    .isNotNull();
        }
    }

    /**
     * A flush the disk refuses reports the failure before H2 closes the store (the set refuses writes from then on),
     * no later flush of the closed store returns as if it had written (H2's commit of a closed store does nothing and
     * says nothing), and the store still closes at once.
     */
    @Test
    void aFlushTheDiskRefusedIsReportedAndTheClosedStoreIsNeverFlushedAsIfDurable() throws Exception {
        FullDisk disk = new FullDisk();
        MemberStore store = MemberStore.open(disk.storage(dir), "member");
        java.util.concurrent.CompletableFuture<Throwable> reported = new java.util.concurrent.CompletableFuture<>();
        store.onDiskFailure(reported::complete);
        insert(store, 1);
        store.commit();
        insert(store, 2);
        disk.fill();
        assertThatThrownBy(store::commit)
                .as("the flush on the full disk")
                .hasStackTraceContaining("No space left on device");
        assertThat(reported).as("reported by H2 before it closed the store").isDone();
        assertThat(reported.get()).hasStackTraceContaining("No space left on device");
        assertThatThrownBy(store::commit)
                .as("a flush of the store H2 closed")
                .hasMessageContaining("closed")
                .hasStackTraceContaining("No space left on device");
        java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        Thread closing = new Thread(
                () -> {
                    try {
                        store.close();
                    } catch (RuntimeException refused) {
                        // what the disk refused was never flushed, so never acknowledged
                    } finally {
                        closed.countDown();
                    }
                },
                "closing-member-store");
        closing.setDaemon(true); // a close that spins must not keep the test JVM alive
        closing.start();
        assertThat(closed.await(10, TimeUnit.SECONDS))
                .as("the store closed on the full disk within 10 s")
                .isTrue();
        disk.free();
        try (MemberStore reopened = MemberStore.open(Storage.directory(dir), "member")) {
            assertThat(reopened.findById("shop", "orders", new org.bson.BsonInt32(1)))
                    .as("flushed before the disk filled")
                    .isPresent();
        }
    }

    /** A one-member set kept in {@code storage}. */
    private static EmbeddedReplicaSet started(Storage storage) {
        return EmbeddedReplicaSet.builder()
                .name("full")
                .members(1)
                .storage(storage)
                .build()
                .start();
    }

    /** The refusal a write gets once the disk refused a flush: the server's OutOfDiskSpace, naming the cause. */
    private static void refusedForTheFullDisk(MongoException e) {
        assertThat(e.getCode()).as(e.getMessage()).isEqualTo(Durability.REFUSED_CODE);
        assertThat(e.getMessage()).contains("disk full");
    }

    private static void insert(MemberStore store, int id) {
        org.bson.BsonDocument reply = store.command(
                "shop",
                new org.bson.BsonDocument("insert", new org.bson.BsonString("orders"))
                        .append(
                                "documents",
                                new org.bson.BsonArray(
                                        List.of(new org.bson.BsonDocument("_id", new org.bson.BsonInt32(id))))));
        assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isEqualTo(1);
    }
}
