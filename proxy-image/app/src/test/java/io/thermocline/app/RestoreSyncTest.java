package io.thermocline.app;

import static io.thermocline.app.LocalTiers.orders;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.evictor.Eligibility;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The restore runbook (docs/backup.md) on two embedded replica sets with a proxy and every worker running: writes,
 * a backup point, a copy of the archive taken after it (as mongodump would), more writes, the archive replaced by the
 * copy between {@code restore-sync --hold} and {@code restore-sync --cutover}. Every write acknowledged before the
 * backup point is there, none after it; every read through the proxy that succeeds after the hold (readers run all
 * along) shows exactly the restored state, by the archive (full scans) and by the fast tier once covered (recent
 * range); writers running all along through the proxy lose exactly their writes acknowledged before the hold (after the
 * backup point) and keep every write started after the restore, which every later scan shows (through Drained, the
 * cutover and Tiered); the feeder and the evictor work afterwards.
 */
@Timeout(300)
class RestoreSyncTest {

    @TempDir
    Path dir;

    @Test
    void aRestoredArchiveComesBackWithNothingFromAfterTheBackupPoint() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            MongoClient archiveClient = tiers.archiveClient;
            MongoClient fastClient = tiers.fastClient;
            Instant now = Instant.now();
            List<Document> cold = new ArrayList<>();
            for (int id = 1; id <= 10; id++) { // archive-only: older than the window
                cold.add(new Document("_id", id)
                        .append("createdAt", Date.from(now.minusSeconds(3 * 3600 + 60L * id)))
                        .append("v", 0));
            }
            orders(archiveClient).insertMany(cold);
            Path config = tiers.config;
            ThermoclineConfig loaded = tiers.loaded();
            try (LocalTiers.DataPlane plane = tiers.startDataPlane("restore-test");
                    MongoClient app = plane.application("retryWrites=true&retryReads=true")) {
                TierClients workers = plane.workers;
                assertThat(plane.feeder.awaitStreaming(Duration.ofSeconds(30))).isTrue();
                MongoCollection<Document> orders = orders(app);
                // A: before the backup point
                for (int i = 100; i < 130; i++) {
                    int id = i;
                    retrying(() -> orders.insertOne(new Document("_id", id)
                            .append("createdAt", new Date())
                            .append("v", 1)));
                }
                retrying(
                        () -> orders.updateOne(Filters.eq("_id", 3), Updates.set("v", 1))); // a cold document, promoted
                retrying(() -> orders.deleteOne(Filters.eq("_id", 4)));
                retrying(() -> orders.updateOne(Filters.eq("_id", 101), Updates.set("v", 2)));
                CommandRun point = CommandRun.thermocline("backup-point", "--json", "--config", config.toString());
                assertThat(point.exit()).as("%s", point).isZero();

                // the backup: the archive's storage, copied after the backup point (as mongodump would)
                List<Document> backup = orders(archiveClient)
                        .find()
                        .sort(Sorts.ascending("_id"))
                        .into(new ArrayList<>());
                assertThat(ids(backup))
                        .as("every write acknowledged before the backup point is in the backup")
                        .contains(3, 100, 129)
                        .doesNotContain(4);
                assertThat(backup.stream()
                                .filter(d -> d.get("_id").equals(101))
                                .findFirst()
                                .orElseThrow()
                                .get("v"))
                        .isEqualTo(2);

                // B: after the backup
                for (int i = 200; i < 220; i++) {
                    int id = i;
                    retrying(() -> orders.insertOne(new Document("_id", id)
                            .append("createdAt", new Date())
                            .append("v", 1)));
                }
                retrying(() -> orders.updateOne(Filters.eq("_id", 100), Updates.set("v", 9)));
                retrying(() -> orders.updateOne(Filters.eq("_id", 5), Updates.set("v", 9)));
                retrying(() -> orders.deleteOne(Filters.eq("_id", 102)));
                retrying(() -> orders.deleteOne(Filters.eq("_id", 6)));

                // readers through the proxy all along: after the hold, a read either fails retryably or shows the
                // backup exactly
                AtomicBoolean stop = new AtomicBoolean();
                AtomicBoolean held = new AtomicBoolean();
                ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
                ConcurrentLinkedQueue<Integer> goodReads = new ConcurrentLinkedQueue<>();
                List<Object> expectedIds = ids(backup);
                Date windowStart = Date.from(now.minusSeconds(600));
                List<Object> expectedRecent = backup.stream()
                        .filter(d -> !d.getDate("createdAt").before(windowStart))
                        .map(d -> d.get("_id"))
                        .toList();
                // writers through the proxy all along, on ids of their own (from WRITER_IDS): retrying as drivers do
                ConcurrentLinkedQueue<Acked> acked = new ConcurrentLinkedQueue<>();
                ExecutorService clients = Executors.newFixedThreadPool(3); // the common pool may have one thread
                List<CompletableFuture<Void>> writers = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    int writer = w;
                    writers.add(CompletableFuture.runAsync(
                            () -> {
                                for (int n = 0; !stop.get(); n++) {
                                    int id = WRITER_IDS + writer * 100_000 + n;
                                    while (!stop.get()) {
                                        long start = System.nanoTime();
                                        try {
                                            orders.insertOne(new Document("_id", id)
                                                    .append("createdAt", new Date())
                                                    .append("v", 1));
                                            acked.add(new Acked(id, start, System.nanoTime()));
                                            break;
                                        } catch (MongoException e) {
                                            if (!e.hasErrorLabel("RetryableWriteError")) {
                                                wrong.add("write failed: " + e.getCode() + " " + e.getMessage());
                                                return;
                                            }
                                            LockSupport.parkNanos(20_000_000);
                                        }
                                    }
                                }
                            },
                            clients));
                }
                ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
                CompletableFuture<Void> readers = CompletableFuture.runAsync(
                        () -> {
                            while (!stop.get()) {
                                boolean after = held.get();
                                long start = System.nanoTime();
                                try {
                                    List<Document> scanned = orders.find()
                                            .sort(Sorts.ascending("_id"))
                                            .into(new ArrayList<>());
                                    List<Document> all = restored(scanned);
                                    List<Object> recent =
                                            ids(restored(orders.find(Filters.gte("createdAt", windowStart))
                                                    .sort(Sorts.ascending("_id"))
                                                    .into(new ArrayList<>())));
                                    if (after) {
                                        seen.add(new Seen(
                                                start,
                                                scanned.stream()
                                                        .map(d -> d.getInteger("_id"))
                                                        .filter(id -> id >= WRITER_IDS)
                                                        .toList()));
                                    }
                                    if (after && !all.equals(backup) && wrong.size() < 5) {
                                        wrong.add("full scan after the hold: " + ids(all) + " "
                                                + all.stream()
                                                        .map(d -> d.get("v"))
                                                        .toList());
                                    }
                                    if (after && !recent.equals(expectedRecent) && wrong.size() < 5) {
                                        wrong.add("recent range after the hold: " + recent);
                                    }
                                    if (after) {
                                        goodReads.add(1);
                                    }
                                } catch (MongoException e) {
                                    if (e.getCode()
                                            != 262) { // refused while the fleet switches: retryable, never wrong
                                        wrong.add("read failed: " + e.getCode() + " " + e.getMessage());
                                    }
                                }
                            }
                        },
                        clients);
                long writersDeadline =
                        System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (acked.size() < 10) {
                    assertThat(wrong).as("the writers before the hold").isEmpty();
                    assertThat(System.nanoTime())
                            .as("10 writes acknowledged before the hold (%s so far)", acked.size())
                            .isLessThan(writersDeadline);
                    Thread.sleep(20);
                }

                // a cursor on the fast tier opened before the hold: its getMores must not bring the fast tier's past
                // back
                MongoCursor<Document> openBefore = orders.find(Filters.gte("createdAt", windowStart))
                        .sort(Sorts.ascending("_id"))
                        .batchSize(2)
                        .iterator();
                assertThat(openBefore.next().getInteger("_id")).isEqualTo(100);
                long holdStarted = System.nanoTime();
                CommandRun hold = CommandRun.thermocline(
                        "restore-sync", "--hold", "--timeout", "60", "--config", config.toString());
                assertThat(hold.exit()).as("%s", hold).isZero();
                held.set(true);
                try {
                    orders.insertOne(new Document("_id", 999).append("createdAt", new Date()));
                    wrong.add("a write was accepted while held");
                } catch (MongoException e) {
                    assertThat(e.getCode()).isEqualTo(262);
                    assertThat(e.hasErrorLabel("RetryableWriteError")).isTrue();
                }

                // the restore (mongorestore --drop): the archive becomes the backup
                orders(archiveClient).drop();
                orders(archiveClient).insertMany(backup);
                long replaced = System.nanoTime();

                CommandRun sync = CommandRun.thermocline(
                        "restore-sync", "--cutover", "--timeout", "120", "--config", config.toString());
                assertThat(sync.exit()).as("%s", sync).isZero();
                assertThat(sync.out()).contains("phase Drained").contains("phase Tiered");
                // readers and writers on the tiered path once covered: a full scan and a write, both begun after the
                // cutover
                long cutover = System.nanoTime();
                long tieredDeadline = cutover + Duration.ofSeconds(60).toNanos();
                while (seen.stream().noneMatch(r -> r.started() > cutover)
                        || acked.stream().noneMatch(a -> a.started() > cutover)) {
                    assertThat(System.nanoTime())
                            .as("a read and a write begun after the cutover succeed (%s)", wrong)
                            .isLessThan(tieredDeadline);
                    Thread.sleep(20);
                }
                List<Integer> continued = new ArrayList<>();
                Integer killedWith = null;
                try {
                    while (openBefore.hasNext()) {
                        continued.add(openBefore.next().getInteger("_id"));
                    }
                } catch (MongoException e) {
                    killedWith = e.getCode();
                }
                System.out.printf(
                        "RestoreSyncTest: the cursor opened before the hold went on with %s, then %s%n",
                        continued, killedWith == null ? "ended" : "failed with " + killedWith);
                assertThat(continued)
                        .as("no document from after the backup point")
                        .allMatch(id -> id < 200 || id >= WRITER_IDS);
                stop.set(true);
                readers.get();
                for (CompletableFuture<Void> w : writers) {
                    w.get();
                }
                clients.shutdown();
                assertThat(wrong).as("reads after the hold").isEmpty();
                assertThat(goodReads).as("reads succeeded after the restore").isNotEmpty();
                // writes: those acknowledged before the hold began are gone with the fast tier (after the backup
                // point), and no
                // read after the hold shows one; those started after the archive was restored are kept, and every full
                // scan
                // that started after one was acknowledged shows it (none lost in Drained, the cutover or after)
                List<Integer> finalWriterIds =
                        orders.find(Filters.gte("_id", WRITER_IDS)).into(new ArrayList<>()).stream()
                                .map(d -> d.getInteger("_id"))
                                .toList();
                List<Acked> before =
                        acked.stream().filter(a -> a.ackedAt() < holdStarted).toList();
                List<Acked> afterRestore =
                        acked.stream().filter(a -> a.started() > replaced).toList();
                assertThat(before).as("writes acknowledged before the hold").isNotEmpty();
                assertThat(afterRestore)
                        .as("writes acknowledged after the restore")
                        .isNotEmpty();
                assertThat(finalWriterIds)
                        .doesNotContainAnyElementsOf(
                                before.stream().map(Acked::id).toList())
                        .containsAll(afterRestore.stream().map(Acked::id).toList());
                System.out.printf(
                        "RestoreSyncTest: %d writes acknowledged before the hold (gone), %d started after the restore (kept), %d"
                                + " reads after the hold%n",
                        before.size(), afterRestore.size(), seen.size());
                for (Seen read : seen) {
                    assertThat(read.writerIds())
                            .as("a read after the hold")
                            .doesNotContainAnyElementsOf(
                                    before.stream().map(Acked::id).toList());
                    assertThat(read.writerIds())
                            .as("a scan shows every write acknowledged before it started")
                            .containsAll(afterRestore.stream()
                                    .filter(a -> a.ackedAt() < read.started())
                                    .map(Acked::id)
                                    .toList());
                }

                List<Document> restored =
                        restored(orders.find().sort(Sorts.ascending("_id")).into(new ArrayList<>()));
                assertThat(ids(restored))
                        .as("nothing from after the backup point")
                        .isEqualTo(expectedIds);
                assertThat(restored).isEqualTo(backup);
                assertThat(ids(restored(orders(fastClient).find().into(new ArrayList<>()))))
                        .as("the fast tier holds the restored recent documents")
                        .containsExactlyInAnyOrderElementsOf(expectedRecent);
                assertThat(restored(orders.find(Filters.gte("createdAt", windowStart))
                                .into(new ArrayList<>())))
                        .as("recent, from the fast tier")
                        .hasSize(expectedRecent.size());

                // healthy afterwards: new writes reach the archive, the evictor evicts what fell out of the window
                retrying(() -> orders.insertOne(
                        new Document("_id", 300).append("createdAt", new Date()).append("v", 1)));
                retrying(() -> orders.insertOne(new Document("_id", 301)
                        .append("createdAt", Date.from(now.minusSeconds(2 * 3600)))
                        .append("v", 1)));
                CommandRun again =
                        CommandRun.thermocline("backup-point", "--timeout", "60", "--config", config.toString());
                assertThat(again.exit()).as("%s", again).isZero();
                assertThat(orders(archiveClient).countDocuments(Filters.in("_id", 300, 301)))
                        .isEqualTo(2);
                Evictor evictor = new Evictor(
                        workers.fast(),
                        workers.archive(),
                        loaded.collections(),
                        loaded.evictor(),
                        Evictor.Options.defaults().withRegistry(new PrometheusRegistry()));
                Evictor.PassResult pass = evictor.runPass();
                assertThat(pass.complete()).isTrue();
                assertThat(pass.count("shop.orders", Eligibility.EVICT)).isEqualTo(1);
                assertThat(orders(fastClient).countDocuments(Filters.eq("_id", 301)))
                        .isZero();
                assertThat(orders.find(Filters.eq("_id", 301)).first()).isNotNull();
            }
        }
    }

    /** The concurrent writers' ids start here; below it, the documents of the backup and of the writes after it. */
    static final int WRITER_IDS = 1_000_000;

    record Acked(int id, long started, long ackedAt) {}

    record Seen(long started, List<Integer> writerIds) {}

    /** The documents that were, or could have been, in the backup (not the concurrent writers'). */
    private static List<Document> restored(List<Document> docs) {
        return docs.stream().filter(d -> d.getInteger("_id") < WRITER_IDS).toList();
    }

    private static List<Object> ids(List<Document> docs) {
        return docs.stream().map(d -> d.get("_id")).collect(Collectors.toList());
    }

    /** As an application's driver does, past the brief refusals of a phase change. */
    private static void retrying(Runnable write) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                write.run();
                return;
            } catch (MongoException e) {
                if (!e.hasErrorLabel("RetryableWriteError") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }
}
