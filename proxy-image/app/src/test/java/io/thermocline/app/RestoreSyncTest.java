package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.evictor.Eligibility;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * range); the feeder and the evictor work afterwards.
 */
@Timeout(300)
class RestoreSyncTest {

    @TempDir
    Path dir;

    @Test
    void aRestoredArchiveComesBackWithNothingFromAfterTheBackupPoint() throws Exception {
        try (EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().name("archive").build().start();
             MongoClient archiveClient = MongoClients.create(archive.connectionString());
             MongoClient fastClient = MongoClients.create(fast.connectionString())) {
            Instant now = Instant.now();
            List<Document> cold = new ArrayList<>();
            for (int id = 1; id <= 10; id++) { // archive-only: older than the window
                cold.add(new Document("_id", id).append("createdAt", Date.from(now.minusSeconds(3 * 3600 + 60L * id))).append("v", 0));
            }
            orders(archiveClient).insertMany(cold);
            Path config = Files.writeString(dir.resolve("thermocline.yaml"), "proxy: {listenHost: 127.0.0.1, port: 0, httpHost: 127.0.0.1, httpPort: 0}\n"
                    + "tiers:\n  archive: {uri: '" + archive.connectionString() + "'}\n  fast: {uri: '" + fast.connectionString() + "'}\n"
                    + "auth: {mode: disabled}\n"
                    + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n");
            ThermoclineConfig loaded = ConfigLoader.load(config, Map.of());
            try (ProxyServer proxy = ProxyServer.create(loaded).start();
                 Feeder feeder = Feeder.start(loaded, Feeder.Options.defaults().withRegistry(new PrometheusRegistry()));
                 Warmer warmer = Warmer.start(loaded, Warmer.Options.defaults().withRegistry(new PrometheusRegistry())
                         .withRecheckInterval(Duration.ofMillis(200)));
                 TierClients workers = TierClients.open(loaded, "test-workers");
                 MongoClient followed = MongoClients.create(archive.connectionString());
                 ArchiveFollower follower = new ArchiveFollower(workers.fast(), followed, loaded.collections(), "restore-test",
                         Duration.ofMillis(50)).start();
                 MongoClient app = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true&retryReads=true")) {
                assertThat(feeder.awaitStreaming(Duration.ofSeconds(30))).isTrue();
                MongoCollection<Document> orders = orders(app);
                // A: before the backup point
                for (int i = 100; i < 130; i++) {
                    int id = i;
                    retrying(() -> orders.insertOne(new Document("_id", id).append("createdAt", new Date()).append("v", 1)));
                }
                retrying(() -> orders.updateOne(Filters.eq("_id", 3), Updates.set("v", 1))); // a cold document, promoted
                retrying(() -> orders.deleteOne(Filters.eq("_id", 4)));
                retrying(() -> orders.updateOne(Filters.eq("_id", 101), Updates.set("v", 2)));
                BackupPointCommandTest.Run point = BackupPointCommandTest.run("backup-point", "--json", "--config", config.toString());
                assertThat(point.exit()).as("%s", point).isZero();

                // the backup: the archive's storage, copied after the backup point (as mongodump would)
                List<Document> backup = orders(archiveClient).find().sort(Sorts.ascending("_id")).into(new ArrayList<>());
                assertThat(ids(backup)).as("every write acknowledged before the backup point is in the backup").contains(3, 100, 129)
                        .doesNotContain(4);
                assertThat(backup.stream().filter(d -> d.get("_id").equals(101)).findFirst().orElseThrow().get("v")).isEqualTo(2);

                // B: after the backup
                for (int i = 200; i < 220; i++) {
                    int id = i;
                    retrying(() -> orders.insertOne(new Document("_id", id).append("createdAt", new Date()).append("v", 1)));
                }
                retrying(() -> orders.updateOne(Filters.eq("_id", 100), Updates.set("v", 9)));
                retrying(() -> orders.updateOne(Filters.eq("_id", 5), Updates.set("v", 9)));
                retrying(() -> orders.deleteOne(Filters.eq("_id", 102)));
                retrying(() -> orders.deleteOne(Filters.eq("_id", 6)));

                // readers through the proxy all along: after the hold, a read either fails retryably or shows the backup exactly
                AtomicBoolean stop = new AtomicBoolean();
                AtomicBoolean held = new AtomicBoolean();
                ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
                ConcurrentLinkedQueue<Integer> goodReads = new ConcurrentLinkedQueue<>();
                List<Object> expectedIds = ids(backup);
                Date windowStart = Date.from(now.minusSeconds(600));
                List<Object> expectedRecent = backup.stream().filter(d -> !d.getDate("createdAt").before(windowStart)).map(d -> d.get("_id")).toList();
                CompletableFuture<Void> readers = CompletableFuture.runAsync(() -> {
                    while (!stop.get()) {
                        boolean after = held.get();
                        try {
                            List<Document> all = orders.find().sort(Sorts.ascending("_id")).into(new ArrayList<>());
                            List<Object> recent = ids(orders.find(Filters.gte("createdAt", windowStart)).sort(Sorts.ascending("_id")).into(new ArrayList<>()));
                            if (after && !all.equals(backup) && wrong.size() < 5) {
                                wrong.add("full scan after the hold: " + ids(all) + " " + all.stream().map(d -> d.get("v")).toList());
                            }
                            if (after && !recent.equals(expectedRecent) && wrong.size() < 5) {
                                wrong.add("recent range after the hold: " + recent);
                            }
                            if (after) {
                                goodReads.add(1);
                            }
                        } catch (MongoException e) {
                            if (e.getCode() != 262) { // refused while the fleet switches: retryable, never wrong
                                wrong.add("read failed: " + e.getCode() + " " + e.getMessage());
                            }
                        }
                    }
                });

                BackupPointCommandTest.Run hold = BackupPointCommandTest.run("restore-sync", "--hold", "--timeout", "60", "--config", config.toString());
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

                BackupPointCommandTest.Run sync = BackupPointCommandTest.run("restore-sync", "--cutover", "--timeout", "120", "--config", config.toString());
                assertThat(sync.exit()).as("%s", sync).isZero();
                assertThat(sync.out()).contains("phase Drained").contains("phase Tiered");
                Thread.sleep(1500); // readers on the tiered path once covered
                stop.set(true);
                readers.get();
                assertThat(wrong).as("reads after the hold").isEmpty();
                assertThat(goodReads).as("reads succeeded after the restore").isNotEmpty();

                List<Document> restored = orders.find().sort(Sorts.ascending("_id")).into(new ArrayList<>());
                assertThat(ids(restored)).as("nothing from after the backup point").isEqualTo(expectedIds);
                assertThat(restored).isEqualTo(backup);
                assertThat(ids(orders(fastClient).find().into(new ArrayList<>()))).as("the fast tier holds the restored recent documents")
                        .containsExactlyInAnyOrderElementsOf(expectedRecent);
                assertThat(orders.find(Filters.gte("createdAt", windowStart)).into(new ArrayList<>())).as("recent, from the fast tier")
                        .hasSize(expectedRecent.size());

                // healthy afterwards: new writes reach the archive, the evictor evicts what fell out of the window
                retrying(() -> orders.insertOne(new Document("_id", 300).append("createdAt", new Date()).append("v", 1)));
                retrying(() -> orders.insertOne(new Document("_id", 301).append("createdAt", Date.from(now.minusSeconds(2 * 3600))).append("v", 1)));
                BackupPointCommandTest.Run again = BackupPointCommandTest.run("backup-point", "--timeout", "60", "--config", config.toString());
                assertThat(again.exit()).as("%s", again).isZero();
                assertThat(orders(archiveClient).countDocuments(Filters.in("_id", 300, 301))).isEqualTo(2);
                Evictor evictor = new Evictor(workers.fast(), workers.archive(), loaded.collections(), loaded.evictor(),
                        Evictor.Options.defaults().withRegistry(new PrometheusRegistry()));
                Evictor.PassResult pass = evictor.runPass();
                assertThat(pass.complete()).isTrue();
                assertThat(pass.count("shop.orders", Eligibility.EVICT)).isEqualTo(1);
                assertThat(orders(fastClient).countDocuments(Filters.eq("_id", 301))).isZero();
                assertThat(orders.find(Filters.eq("_id", 301)).first()).isNotNull();
            }
        }
    }

    private static List<Object> ids(List<Document> docs) {
        return docs.stream().map(d -> d.get("_id")).collect(Collectors.toList());
    }

    private static MongoCollection<Document> orders(MongoClient client) {
        return client.getDatabase("shop").getCollection("orders");
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
