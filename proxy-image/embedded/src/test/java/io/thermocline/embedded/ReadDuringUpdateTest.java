package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A query returns each document as it was when the query matched it, as a server reads a snapshot: never a
 * version a concurrent update wrote after the match. The storage engine updates documents in place and hands
 * queries references to them, so a reply converted while an update ran (or a later batch of the cursor) carried
 * a version its filter excludes; the history checker saw a tiered scan return one (ShadowHistoryTest seed 1).
 */
@Timeout(120)
class ReadDuringUpdateTest {
    private static final int DOCS = 300;
    private static final long MATCHING = 1_000;
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;

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

    @Test
    void everyDocumentAQueryReturnsMatchesItsFilterWhileUpdatesMoveDocumentsOutOfIt() throws Exception {
        assertNoExcludedVersion("firstBatch", 0);
    }

    @Test
    void laterBatchesOfACursorReturnTheVersionsTheQueryMatched() throws Exception {
        assertNoExcludedVersion("getMore", 7);
    }

    private void assertNoExcludedVersion(String name, int batchSize) throws Exception {
        MongoCollection<Document> coll = client.getDatabase("race").getCollection(name);
        List<Document> seed = new ArrayList<>();
        for (int i = 0; i < DOCS; i++) {
            seed.add(new Document("_id", i).append("age", MATCHING).append("pad", "x".repeat(200)));
        }
        coll.insertMany(seed);
        Bson filter = Filters.gte("age", MATCHING);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        AtomicLong updates = new AtomicLong();
        Queue<Document> excluded = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                long seedValue = w;
                work.add(pool.submit(() -> {
                    Random random = new Random(seedValue);
                    while (!stop.get()) {
                        // out of the filter and back: a read that met the old version must not return the new one
                        int id = random.nextInt(DOCS);
                        coll.updateOne(Filters.eq("_id", id), Updates.set("age", 1L));
                        coll.updateOne(Filters.eq("_id", id), Updates.set("age", MATCHING));
                        updates.incrementAndGet();
                    }
                }));
            }
            for (int r = 0; r < 2; r++) {
                work.add(pool.submit(() -> {
                    while (!stop.get()) {
                        var find = coll.find(filter);
                        if (batchSize > 0) {
                            find = find.batchSize(batchSize);
                        }
                        for (Document d : find) {
                            if (d.getLong("age") < MATCHING) {
                                excluded.add(d);
                            }
                        }
                        reads.incrementAndGet();
                    }
                }));
            }
            long deadline = System.nanoTime() + 4_000_000_000L;
            while (System.nanoTime() < deadline && excluded.isEmpty()) {
                Thread.sleep(50);
            }
            stop.set(true);
            for (Future<?> f : work) {
                f.get();
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        assertThat(reads.get()).as("queries ran").isPositive();
        assertThat(updates.get()).as("updates ran").isPositive();
        assertThat(excluded).as("documents returned in a version the filter excludes (%d queries, %d updates)",
                reads.get(), updates.get()).isEmpty();
    }
}
