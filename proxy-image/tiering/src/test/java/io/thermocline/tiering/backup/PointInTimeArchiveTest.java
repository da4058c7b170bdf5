package io.thermocline.tiering.backup;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What an archive restored to an arbitrary point in time holds (docs/backup.md, Point in time): copies of the archive
 * taken at arbitrary moments while four writers insert, replace, {@code $set} (mirrored as the looked-up document) and
 * delete on the fast tier, some deletes right after an update (whose lookup then finds the document gone), and the
 * feeder mirrors. Each copy is checked against the writers' history and the feeder's mirrored-through M read just
 * before it (every eighth copy: taken after a backup point, whose fast-tier time stands for M): every document holds
 * a version at least as new as its last write acknowledged at or before M (a delete: absent), and only versions some
 * write wrote, whole. It is not asserted to be a prefix, because it is not one: the feeder mirrors the document as it
 * is when the event is read ({@code updateLookup}), one namespace's bulk write at a time, so a copy may hold a later
 * write of one document without an earlier write of another; the test prints how many copies did.
 */
@Timeout(240)
class PointInTimeArchiveTest {

    static final int WRITERS = 4;
    static final int KEYS_PER_WRITER = 6;
    static final int WRITES_PER_WRITER = 120;

    /** One acknowledged write: version {@code v} of the document, or its delete (v = -1), acknowledged by {@code at}. */
    record Write(int id, int v, BsonTimestamp at) {}

    record Copy(BsonTimestamp mirroredThrough, List<BsonDocument> documents) {}

    @Test
    void anArchiveCopyHoldsEveryWriteUpToMirroredThroughAndOnlyWholeWrittenVersions() throws Exception {
        long seed = Long.getLong("pitr.seed", System.nanoTime());
        try (TwoTiers tiers = new TwoTiers()) {
            Feeder feeder = tiers.feeder();
            MongoCollection<BsonDocument> fast = tiers.fastOrders();
            ConcurrentLinkedQueue<Write> history = new ConcurrentLinkedQueue<>();
            List<Copy> copies = new java.util.concurrent.CopyOnWriteArrayList<>();
            AtomicInteger backupPoints = new AtomicInteger();
            AtomicBoolean done = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                writers.add(pool.submit(() -> {
                    Random random = new Random(seed + writer);
                    int[] version = new int[KEYS_PER_WRITER]; // 0: never written, -1: deleted for good
                    try (ClientSession session = tiers.fastSync.startSession()) {
                        for (int i = 0; i < WRITES_PER_WRITER; i++) {
                            int k = random.nextInt(KEYS_PER_WRITER);
                            int id = writer * 100 + k;
                            if (version[k] < 0) {
                                continue;
                            }
                            int op = random.nextInt(20);
                            if (version[k] > 3 && op < 2) {
                                if (op == 0) {
                                    // an update and a delete close together: the update's event finds the document gone
                                    fast.updateOne(session, Filters.eq("_id", id), set(id, ++version[k]));
                                    history.add(new Write(id, version[k], session.getOperationTime()));
                                }
                                fast.deleteOne(session, Filters.eq("_id", id));
                                version[k] = -1;
                            } else if (version[k] == 0) {
                                fast.insertOne(session, doc(id, version[k] = 1));
                            } else if (op < 11) {
                                fast.updateOne(session, Filters.eq("_id", id), set(id, ++version[k]));
                            } else {
                                fast.replaceOne(session, Filters.eq("_id", id), doc(id, ++version[k]));
                            }
                            history.add(new Write(id, version[k], session.getOperationTime()));
                        }
                    }
                    return null;
                }));
            }
            ConcurrentLinkedQueue<Throwable> copyFailures = new ConcurrentLinkedQueue<>();
            BackupPoint points = new BackupPoint(tiers.fast, tiers.archive, "pitr-test", Clock.systemUTC());
            Thread copier = new Thread(() -> {
                for (int n = 0; !done.get(); n++) {
                    if (n % 8 == 7) {
                        // a backup point, then a copy: it holds every write acknowledged before the point began
                        try {
                            BackupPoint.Point point = points.await(
                                    Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofSeconds(10), line -> {});
                            copies.add(new Copy(point.fastTierTime(), TwoTiers.all(tiers.archiveOrders())));
                            backupPoints.incrementAndGet();
                        } catch (Exception e) {
                            copyFailures.add(e);
                            return;
                        }
                    } else {
                        FeederCheckpoint c = tiers.store.feederCheckpoint();
                        copies.add(new Copy(c.mirroredThrough(), TwoTiers.all(tiers.archiveOrders())));
                    }
                }
            });
            copier.start();
            for (Future<?> f : writers) {
                f.get();
            }
            tiers.sync();
            done.set(true);
            copier.join();
            pool.shutdown();
            copies.add(new Copy(tiers.store.feederCheckpoint().mirroredThrough(), TwoTiers.all(tiers.archiveOrders())));
            assertThat(copyFailures).as("backup points while the writers ran").isEmpty();

            int beyondPrefix = 0;
            for (Copy copy : copies) {
                Map<Integer, BsonDocument> held = new TreeMap<>();
                copy.documents().forEach(d -> held.put(d.getInt32("_id").getValue(), d));
                Map<Integer, Write> lastCovered = new TreeMap<>();
                Map<Integer, Integer> newestWritten = new TreeMap<>();
                for (Write w : history) {
                    newestWritten.merge(w.id(), w.v(), (a, b) -> a < 0 || b < 0 ? -1 : Math.max(a, b));
                    if (w.at().compareTo(copy.mirroredThrough()) <= 0) {
                        lastCovered.merge(w.id(), w, (a, b) -> later(a, b));
                    }
                }
                String where = "seed " + seed + ", copy at mirrored-through " + copy.mirroredThrough();
                for (var e : lastCovered.entrySet()) {
                    BsonDocument d = held.get(e.getKey());
                    if (e.getValue().v() < 0) {
                        assertThat(d)
                                .as("%s: _id %d deleted by then", where, e.getKey())
                                .isNull();
                    } else {
                        int v = d == null ? -2 : d.getInt32("v").getValue();
                        if (d == null) {
                            assertThat(newestWritten.get(e.getKey()))
                                    .as("%s: _id %d absent, so deleted later", where, e.getKey())
                                    .isEqualTo(-1);
                        } else {
                            assertThat(v)
                                    .as("%s: _id %d at least its last covered version", where, e.getKey())
                                    .isGreaterThanOrEqualTo(e.getValue().v());
                            beyondPrefix += v > e.getValue().v() ? 1 : 0;
                        }
                    }
                }
                for (BsonDocument d : copy.documents()) {
                    int id = d.getInt32("_id").getValue();
                    int v = d.getInt32("v").getValue();
                    assertThat(d.getString("payload").getValue())
                            .as("%s: a whole version", where)
                            .isEqualTo(id + ":" + v);
                    assertThat(history.stream().anyMatch(w -> w.id() == id && w.v() == v))
                            .as("%s: _id %d v %d was written", where, id, v)
                            .isTrue();
                }
            }
            System.out.printf(
                    "PointInTimeArchiveTest seed %d: %d copies (%d after backup points), %d document versions newer than"
                            + " mirrored-through%n",
                    seed, copies.size(), backupPoints.get(), beyondPrefix);
            assertThat(copies).hasSizeGreaterThan(1);
            assertThat(feeder.running()).isTrue();
        }
    }

    /** Of two writes of one document, the one acknowledged later (a delete is always the last). */
    private static Write later(Write a, Write b) {
        if (a.v() < 0 || b.v() < 0) {
            return a.v() < 0 ? a : b;
        }
        return a.v() >= b.v() ? a : b;
    }

    /** Version {@code v} by {@code $set} (the feeder mirrors it as its change event's looked-up document). */
    private static BsonDocument set(int id, int v) {
        return new BsonDocument(
                "$set", new BsonDocument("v", new BsonInt32(v)).append("payload", new BsonString(id + ":" + v)));
    }

    private static BsonDocument doc(int id, int v) {
        return new BsonDocument("_id", new BsonInt32(id))
                .append("createdAt", new org.bson.BsonDateTime(Instant.now().toEpochMilli()))
                .append("v", new BsonInt32(v))
                .append("payload", new BsonString(id + ":" + v));
    }
}
