package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.thermocline.embedded.member.Member;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ReplicationTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().name("repl").members(3).build().start();
        client = MongoClients.create(rs.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    @AfterEach
    void resumeAll() {
        rs.members().forEach(rs::resumeReplication);
        rs.setReplicationLag(Duration.ZERO);
        rs.awaitReplication(Duration.ofSeconds(10));
    }

    private static Document find(
            MongoClient direct, String coll, Object id, BsonTimestamp afterClusterTime, long maxTimeMs) {
        Document readConcern = new Document("level", "local");
        if (afterClusterTime != null) {
            readConcern.append("afterClusterTime", afterClusterTime);
        }
        Document reply = direct.getDatabase("repl")
                .runCommand(
                        new Document("find", coll)
                                .append("filter", new Document("_id", id))
                                .append("readConcern", readConcern)
                                .append("maxTimeMS", maxTimeMs),
                        ReadPreference.secondaryPreferred());
        List<Document> batch = reply.get("cursor", Document.class).getList("firstBatch", Document.class);
        return batch.isEmpty() ? null : batch.get(0);
    }

    @Test
    void pausedSecondaryServesOldDataAndAfterClusterTimeWaitsForIt() {
        Member secondary = rs.secondaries().get(0);
        rs.pauseReplication(secondary);
        Document reply = client.getDatabase("repl")
                .runCommand(new Document("insert", "lag")
                        .append("documents", List.of(new Document("_id", 1)))
                        .append("writeConcern", new Document("w", 1)));
        BsonTimestamp written = (BsonTimestamp) reply.get("operationTime");
        try (MongoClient direct = MongoClients.create(secondary.directConnectionString())) {
            assertThat(find(direct, "lag", 1, null, 0)).isNull();
            assertThatThrownBy(() -> find(direct, "lag", 1, written, 300))
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoExecutionTimeoutException.class,
                            e -> assertThat(e.getCode()).isEqualTo(50));
            rs.resumeReplication(secondary);
            assertThat(find(direct, "lag", 1, written, 10_000)).isEqualTo(new Document("_id", 1));
        }
    }

    /**
     * A secondary's read reports an operationTime at or after every write it saw, as a mongod's secondary
     * reads at its lastApplied snapshot: a causal session carries that time to the next member, which must
     * then wait for what this read saw. The applier once wrote an entry to storage before recording it
     * applied, and a read in between reported the previous entry's time: the session's next read, on a
     * secondary behind, went back in time (SecondaryReadsTest's causal session counted 1, then 0).
     */
    @Test
    void aReadDuringAnEntrysApplicationReportsATimeCoveringIt() {
        Member applying = rs.secondaries().get(0);
        Member behind = rs.secondaries().get(1);
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("covered").withWriteConcern(WriteConcern.W1);
        coll.insertOne(new Document("_id", 0));
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        rs.pauseReplication(behind);
        rs.holdApplyingMidEntry(applying, true);
        try (MongoClient onApplying = MongoClients.create(applying.directConnectionString());
                MongoClient onBehind = MongoClients.create(behind.directConnectionString())) {
            Document reply = client.getDatabase("repl")
                    .runCommand(new Document("insert", "covered")
                            .append("documents", List.of(new Document("_id", 1)))
                            .append("writeConcern", new Document("w", 1)));
            BsonTimestamp written = (BsonTimestamp) reply.get("operationTime");
            // the held applier wrote the insert to storage and has not recorded it applied
            Document seen = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (seen == null && System.nanoTime() < deadline) {
                seen = onApplying
                        .getDatabase("repl")
                        .runCommand(
                                new Document("find", "covered").append("filter", new Document("_id", 1)),
                                ReadPreference.secondaryPreferred());
                if (seen.get("cursor", Document.class)
                        .getList("firstBatch", Document.class)
                        .isEmpty()) {
                    seen = null;
                }
            }
            assertThat(seen).as("the insert, visible on the member applying it").isNotNull();
            BsonTimestamp reported = (BsonTimestamp) seen.get("operationTime");
            assertThat(reported)
                    .as("operationTime of a read that saw the insert written at " + written)
                    .isGreaterThanOrEqualTo(written);
            // the session's next read, on a member that has not applied the insert, waits for it
            assertThatThrownBy(() -> find(onBehind, "covered", 1, reported, 300))
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoExecutionTimeoutException.class,
                            e -> assertThat(e.getCode()).isEqualTo(50));
        } finally {
            rs.holdApplyingMidEntry(applying, false);
        }
    }

    /**
     * The primary changes storage before it stamps the write's oplog entry: a read in between sees the write and must
     * not report a time before it (a causal session's next read, on a member behind, would miss it; a shadow
     * comparison would wait for too little of the archive's history).
     */
    @Test
    void aReadOfThePrimaryThatSawAWriteNotYetStampedReportsATimeCoveringIt() throws Exception {
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("stamped").withWriteConcern(WriteConcern.W1);
        coll.insertOne(new Document("_id", 0));
        Member primary = rs.primary();
        long heldBefore = rs.writesHeldBeforeTheirOplogEntry();
        long waitedBefore = rs.readsThatWaitedForAStamp();
        rs.holdWritesBeforeTheirOplogEntry(primary, true);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (MongoClient direct = MongoClients.create(primary.directConnectionString())) {
            var write = threads.submit(() -> client.getDatabase("repl")
                    .runCommand(new Document("insert", "stamped")
                            .append("documents", List.of(new Document("_id", 1)))
                            .append("writeConcern", new Document("w", 1))));
            org.awaitility.Awaitility.await()
                    .atMost(10, TimeUnit.SECONDS)
                    .until(() -> rs.writesHeldBeforeTheirOplogEntry()
                            > heldBefore); // the insert is in storage, not in the oplog
            var read = threads.submit(() -> direct.getDatabase("repl")
                    .runCommand(new Document("find", "stamped").append("filter", new Document("_id", 1))));
            // the read runs against storage that holds the insert; let the insert be stamped only now
            org.awaitility.Awaitility.await()
                    .pollDelay(java.time.Duration.ZERO)
                    .atMost(10, TimeUnit.SECONDS)
                    .until(() -> read.isDone() || rs.readsThatWaitedForAStamp() > waitedBefore);
            rs.holdWritesBeforeTheirOplogEntry(primary, false);
            BsonTimestamp written =
                    (BsonTimestamp) write.get(10, TimeUnit.SECONDS).get("operationTime");
            Document seen = read.get(10, TimeUnit.SECONDS);
            assertThat(seen.get("cursor", Document.class).getList("firstBatch", Document.class))
                    .as("the read saw the insert")
                    .hasSize(1);
            assertThat((BsonTimestamp) seen.get("operationTime"))
                    .as("operationTime of a read that saw the insert written at " + written)
                    .isGreaterThanOrEqualTo(written);
        } finally {
            rs.holdWritesBeforeTheirOplogEntry(primary, false);
            threads.shutdownNow();
        }
    }

    /**
     * As mongod (jstests operation_time_read_and_write_concern.js): a majority read's operationTime is the majority
     * commit point, a local read's the member's newest write. The archive follower takes a majority read's time as
     * "every change up to here is in the change stream"; the newest time claimed a write the stream did not show yet,
     * and a shadow comparison counted the fast tier, lacking it, as a divergence (ShadowHistoryTest in CI).
     */
    @Test
    void aMajorityReadReportsTheMajorityCommitPointAsItsOperationTime() {
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("majorityTime").withWriteConcern(WriteConcern.MAJORITY);
        coll.insertOne(new Document("_id", 0));
        rs.secondaries().forEach(rs::pauseReplication);
        Document written = client.getDatabase("repl")
                .runCommand(new Document("insert", "majorityTime")
                        .append("documents", List.of(new Document("_id", 1)))
                        .append("writeConcern", new Document("w", 1)));
        BsonTimestamp writtenAt = (BsonTimestamp) written.get("operationTime");
        Document majority = read("majorityTime", "majority");
        assertThat(ids(majority))
                .as("a majority read before a majority applied the insert")
                .containsExactly(0);
        assertThat((BsonTimestamp) majority.get("operationTime"))
                .as("its operationTime, the insert written at " + writtenAt)
                .isLessThan(writtenAt);
        Document local = read("majorityTime", "local");
        assertThat(ids(local)).containsExactly(0, 1);
        assertThat((BsonTimestamp) local.get("operationTime")).isGreaterThanOrEqualTo(writtenAt);
        rs.members().forEach(rs::resumeReplication);
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            Document after = read("majorityTime", "majority");
            assertThat(ids(after)).containsExactly(0, 1);
            assertThat((BsonTimestamp) after.get("operationTime")).isGreaterThanOrEqualTo(writtenAt);
        });
    }

    /** A majority read never sees a write that is in the primary's storage and not yet in its oplog (no pre-image hides it there). */
    @Test
    void aMajorityReadDoesNotSeeAWriteBetweenStorageAndOplog() throws Exception {
        client.getDatabase("repl")
                .getCollection("majorityHeld")
                .withWriteConcern(WriteConcern.MAJORITY)
                .insertOne(new Document("_id", 0));
        Member primary = rs.primary();
        rs.secondaries().forEach(rs::pauseReplication);
        long heldBefore = rs.writesHeldBeforeTheirOplogEntry();
        long waitedBefore = rs.readsThatWaitedForAStamp();
        rs.holdWritesBeforeTheirOplogEntry(primary, true);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            var write = threads.submit(() -> client.getDatabase("repl")
                    .runCommand(new Document("insert", "majorityHeld")
                            .append("documents", List.of(new Document("_id", 1)))
                            .append("writeConcern", new Document("w", 1))));
            org.awaitility.Awaitility.await()
                    .atMost(10, TimeUnit.SECONDS)
                    .until(() -> rs.writesHeldBeforeTheirOplogEntry()
                            > heldBefore); // the insert is in storage, not in the oplog
            var read = threads.submit(() -> read("majorityHeld", "majority"));
            org.awaitility.Awaitility.await()
                    .pollDelay(Duration.ZERO)
                    .atMost(10, TimeUnit.SECONDS)
                    .until(() -> read.isDone() || rs.readsThatWaitedForAStamp() > waitedBefore);
            rs.holdWritesBeforeTheirOplogEntry(primary, false);
            write.get(10, TimeUnit.SECONDS);
            assertThat(ids(read.get(10, TimeUnit.SECONDS)))
                    .as("a majority read while the insert was between storage and oplog")
                    .containsExactly(0);
        } finally {
            rs.holdWritesBeforeTheirOplogEntry(primary, false);
            threads.shutdownNow();
        }
    }

    /** As a majority read, an update's lookup never returns a write still between storage and oplog: a majority may never apply it. */
    @Test
    void anUpdateLookupDoesNotSeeAWriteBetweenStorageAndOplog() throws Exception {
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("lookupHeld").withWriteConcern(WriteConcern.MAJORITY);
        coll.insertOne(new Document("_id", 1).append("v", 0));
        Member primary = rs.primary();
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (var stream = coll.watch()
                .fullDocument(com.mongodb.client.model.changestream.FullDocument.UPDATE_LOOKUP)
                .cursor()) {
            coll.updateOne(Filters.eq("_id", 1), new Document("$set", new Document("v", 1)));
            rs.secondaries().forEach(rs::pauseReplication);
            long heldBefore = rs.writesHeldBeforeTheirOplogEntry();
            long waitedBefore = rs.readsThatWaitedForAStamp();
            rs.holdWritesBeforeTheirOplogEntry(primary, true);
            var write = threads.submit(() -> coll.withWriteConcern(WriteConcern.W1)
                    .updateOne(Filters.eq("_id", 1), new Document("$set", new Document("v", 2))));
            org.awaitility.Awaitility.await()
                    .atMost(10, TimeUnit.SECONDS)
                    .until(() ->
                            rs.writesHeldBeforeTheirOplogEntry() > heldBefore); // v 2 is in storage, not in the oplog
            var event = threads.submit(stream::next);
            org.awaitility.Awaitility.await()
                    .pollDelay(Duration.ZERO)
                    .atMost(10, TimeUnit.SECONDS)
                    .until(() -> event.isDone() || rs.readsThatWaitedForAStamp() > waitedBefore);
            rs.holdWritesBeforeTheirOplogEntry(primary, false);
            write.get(10, TimeUnit.SECONDS);
            assertThat(event.get(10, TimeUnit.SECONDS).getFullDocument())
                    .as("the lookup of the update to v 1")
                    .isEqualTo(new Document("_id", 1).append("v", 1));
        } finally {
            rs.holdWritesBeforeTheirOplogEntry(primary, false);
            threads.shutdownNow();
        }
    }

    private static Document read(String coll, String level) {
        return client.getDatabase("repl")
                .runCommand(new Document("find", coll)
                        .append("sort", new Document("_id", 1))
                        .append("readConcern", new Document("level", level)));
    }

    private static List<Integer> ids(Document reply) {
        return reply.get("cursor", Document.class).getList("firstBatch", Document.class).stream()
                .map(d -> d.getInteger("_id"))
                .toList();
    }

    @Test
    void laggingSecondaryAppliesAWriteOnlyOnceTheLagHasPassed() {
        rs.setReplicationLag(Duration.ofMinutes(10));
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("lagging").withWriteConcern(WriteConcern.W1);
        coll.insertOne(new Document("_id", "late"));
        Member secondary = rs.secondaries().get(1);
        try (MongoClient direct = MongoClients.create(secondary.directConnectionString())) {
            assertThat(find(direct, "lagging", "late", null, 0)).isNull();
            rs.setReplicationLag(Duration.ofMillis(200));
            org.awaitility.Awaitility.await()
                    .atMost(10, TimeUnit.SECONDS)
                    .untilAsserted(() ->
                            assertThat(find(direct, "lagging", "late", null, 0)).isNotNull());
        }
    }

    @Test
    void majorityWriteWaitsForAMajorityOfMembers() {
        MongoCollection<Document> coll = client.getDatabase("repl").getCollection("majority");
        rs.secondaries().forEach(rs::pauseReplication);
        assertThatThrownBy(() -> coll.withWriteConcern(WriteConcern.MAJORITY.withWTimeout(300, TimeUnit.MILLISECONDS))
                        .insertOne(new Document("_id", 1)))
                .isInstanceOfSatisfying(
                        MongoWriteConcernException.class,
                        e -> assertThat(e.getCode()).isEqualTo(64));
        coll.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", 2));
        rs.resumeReplication(rs.secondaries().get(0));
        coll.withWriteConcern(WriteConcern.MAJORITY.withWTimeout(10, TimeUnit.SECONDS))
                .insertOne(new Document("_id", 3));
        assertThatThrownBy(() -> coll.withWriteConcern(new WriteConcern(3).withWTimeout(300, TimeUnit.MILLISECONDS))
                        .insertOne(new Document("_id", 4)))
                .isInstanceOf(MongoWriteConcernException.class);
    }

    @Test
    void aWriteConcernModeTheSetDoesNotDefineLetsTheWriteStandWithError79() {
        MongoCollection<Document> coll = client.getDatabase("repl").getCollection("tagged");
        assertThatThrownBy(() -> coll.withWriteConcern(new WriteConcern("nonexistentTag"))
                        .insertOne(new Document("_id", 1)))
                .isInstanceOfSatisfying(MongoWriteConcernException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(79);
                    assertThat(e.getWriteConcernError().getMessage())
                            .isEqualTo(
                                    "No write concern mode named 'nonexistentTag' found in replica set configuration");
                });
        assertThat(coll.find(Filters.eq("_id", 1)).first())
                .as("the write stands, as on mongod")
                .isNotNull();
    }

    @Test
    void majorityReadsSeeOnlyWritesAMajorityApplied() {
        MongoCollection<Document> coll = client.getDatabase("repl").getCollection("majorityReads");
        coll.insertMany(List.of(new Document("_id", 1).append("v", 1), new Document("_id", 2).append("v", 1)));
        rs.secondaries().forEach(rs::pauseReplication);
        MongoCollection<Document> w1 = coll.withWriteConcern(WriteConcern.W1);
        w1.updateOne(Filters.eq("_id", 1), new Document("$set", new Document("v", 2)));
        w1.deleteOne(Filters.eq("_id", 2));
        w1.insertOne(new Document("_id", 3).append("v", 1));
        MongoCollection<Document> majority = coll.withReadConcern(com.mongodb.ReadConcern.MAJORITY);
        assertThat(majority.find().sort(new Document("_id", 1)).into(new java.util.ArrayList<>()))
                .isEqualTo(List.of(new Document("_id", 1).append("v", 1), new Document("_id", 2).append("v", 1)));
        assertThat(majority.countDocuments(Filters.eq("v", 1))).isEqualTo(2);
        assertThat(coll.withReadConcern(com.mongodb.ReadConcern.LOCAL)
                        .find()
                        .sort(new Document("_id", 1))
                        .map(d -> d.getInteger("_id"))
                        .into(new java.util.ArrayList<>()))
                .containsExactly(1, 3);
        rs.members().forEach(rs::resumeReplication);
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        assertThat(majority.find()
                        .sort(new Document("_id", 1))
                        .map(d -> d.getInteger("_id"))
                        .into(new java.util.ArrayList<>()))
                .containsExactly(1, 3);
    }

    @Test
    void aggregationOutputReplicatesAndIsStreamed() {
        MongoCollection<Document> source = client.getDatabase("repl").getCollection("source");
        MongoCollection<Document> target = client.getDatabase("repl").getCollection("merged");
        source.insertMany(List.of(new Document("_id", 1).append("g", "a"), new Document("_id", 2).append("g", "b")));
        target.insertOne(new Document("_id", "stale"));
        try (var stream =
                target.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
            source.aggregate(List.of(new Document("$merge", new Document("into", "merged"))))
                    .toCollection();
            List<String> events = new java.util.ArrayList<>();
            while (events.size() < 2) {
                var e = stream.tryNext();
                if (e != null) {
                    events.add(e.getOperationType().getValue() + ":"
                            + e.getDocumentKey().get("_id"));
                }
            }
            assertThat(events).containsExactly("insert:BsonInt32{value=1}", "insert:BsonInt32{value=2}");
        }
        assertThat(rs.awaitReplication(Duration.ofSeconds(10))).isTrue();
        for (Member m : rs.members()) {
            try (MongoClient direct = MongoClients.create(m.directConnectionString())) {
                assertThat(direct.getDatabase("repl").getCollection("merged").countDocuments())
                        .isEqualTo(3);
            }
        }
    }

    @Test
    void secondaryRefusesWritesAndServesSecondaryReads() {
        client.getDatabase("repl").getCollection("reads").insertOne(new Document("_id", "r"));
        rs.awaitReplication(Duration.ofSeconds(5));
        Member secondary = rs.secondaries().get(0);
        try (MongoClient direct = MongoClients.create(secondary.directConnectionString())) {
            MongoCollection<Document> coll = direct.getDatabase("repl").getCollection("reads");
            assertThatThrownBy(() -> coll.insertOne(new Document("_id", "w")))
                    .isInstanceOf(MongoNotPrimaryException.class);
            assertThat(coll.withReadPreference(ReadPreference.secondary())
                            .find(Filters.eq("_id", "r"))
                            .first())
                    .isNotNull();
        }
    }

    @Test
    void createIndexesReplicateSoUniquenessHoldsOnEveryMember() {
        MongoCollection<Document> coll = client.getDatabase("repl").getCollection("indexed");
        coll.createIndex(new Document("k", 1), new com.mongodb.client.model.IndexOptions().unique(true));
        rs.awaitReplication(Duration.ofSeconds(5));
        for (Member m : rs.members()) {
            try (MongoClient direct = MongoClients.create(m.directConnectionString())) {
                assertThat(direct.getDatabase("repl").getCollection("indexed").listIndexes())
                        .extracting(d -> d.getString("name"))
                        .contains("k_1");
            }
        }
    }

    /**
     * mongod's readers never wait for a writer: a majority read during a multi-document update, stopped between two of
     * its documents, answers with the documents written so far. The embedded set made every majority read wait for a
     * whole write statement: on its on-disk engine a whole-collection updateMany through the proxy (and the evictor's
     * one-statement delete of thousands of documents) kept majority reads waiting until they failed after 30 s (the
     * README's demo, with the feeder's lookups and the proxy's fence reads). Now each document is one write step.
     */
    @Test
    void aMajorityReadDuringAMultiDocumentUpdateSeesTheDocumentsWrittenSoFar() throws Exception {
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("multiUpdate").withWriteConcern(WriteConcern.MAJORITY);
        coll.insertMany(List.of(
                new Document("_id", 1).append("v", 0).append("a", List.of(1, 2)),
                new Document("_id", 2).append("v", 0).append("a", List.of(2, 3)),
                new Document("_id", 3).append("v", 0).append("a", List.of(2))));
        var update = heldAfterTheFirstDocument(
                "multiUpdate",
                () -> coll.withWriteConcern(WriteConcern.W1)
                        .updateMany(Filters.eq("a", 2), com.mongodb.client.model.Updates.set("v", 1))
                        .getModifiedCount(),
                docs -> docs.stream().map(d -> d.getInteger("v")).toList(),
                List.of(1, 0, 0));
        assertThat(update).as("documents modified").isEqualTo(3L);
        // a positional update needs its filter to find each document's element: it still finds it
        assertThat(coll.updateMany(Filters.eq("a", 2), com.mongodb.client.model.Updates.set("a.$", 20))
                        .getModifiedCount())
                .isEqualTo(3L);
        assertThat(coll.find()
                        .sort(new Document("_id", 1))
                        .map(d -> d.getList("a", Integer.class))
                        .into(new java.util.ArrayList<>()))
                .containsExactly(List.of(1, 20), List.of(20, 3), List.of(20));
    }

    /** As above, for a multi-document delete: a majority read waits for one document's delete, not the statement's. */
    @Test
    void aMajorityReadDuringAMultiDocumentDeleteSeesTheDocumentsDeletedSoFar() throws Exception {
        MongoCollection<Document> coll =
                client.getDatabase("repl").getCollection("multiDelete").withWriteConcern(WriteConcern.MAJORITY);
        coll.insertMany(List.of(new Document("_id", 1), new Document("_id", 2), new Document("_id", 3)));
        var deleted = heldAfterTheFirstDocument(
                "multiDelete",
                () -> coll.withWriteConcern(WriteConcern.W1)
                        .deleteMany(Filters.gt("_id", 0))
                        .getDeletedCount(),
                docs -> docs.stream().map(d -> d.getInteger("_id")).toList(),
                List.of(2, 3));
        assertThat(deleted).as("documents deleted").isEqualTo(3L);
    }

    /**
     * Runs a multi-document write held after its first document; while it is held, a majority read (bounded by maxTimeMS)
     * must come to see {@code expected} of the collection's documents, sorted by _id. Then lets the write finish.
     */
    private static <T> T heldAfterTheFirstDocument(
            String coll,
            java.util.concurrent.Callable<T> write,
            java.util.function.Function<List<Document>, List<Integer>> seen,
            List<Integer> expected)
            throws Exception {
        Member primary = rs.primary();
        long heldBefore = rs.documentWritesHeld();
        rs.holdWritesAfterDocuments(primary, 1);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            var running = threads.submit(write);
            org.awaitility.Awaitility.await()
                    .atMost(20, TimeUnit.SECONDS)
                    .until(() -> rs.documentWritesHeld() > heldBefore || running.isDone()); // the second document waits
            assertThat(running.isDone())
                    .as("the write stopped after its first document")
                    .isFalse();
            org.awaitility.Awaitility.await().atMost(20, TimeUnit.SECONDS).untilAsserted(() -> {
                Document majority = client.getDatabase("repl")
                        .runCommand(new Document("find", coll)
                                .append("sort", new Document("_id", 1))
                                .append("readConcern", new Document("level", "majority"))
                                .append("maxTimeMS", 5_000));
                assertThat(seen.apply(majority.get("cursor", Document.class).getList("firstBatch", Document.class)))
                        .as("a majority read while the write is held after its first document")
                        .isEqualTo(expected);
            });
            assertThat(running.isDone()).isFalse();
            rs.holdWritesAfterDocuments(primary, -1);
            return running.get(20, TimeUnit.SECONDS);
        } finally {
            rs.holdWritesAfterDocuments(primary, -1);
            threads.shutdownNow();
        }
    }
}
