package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.chaos.WorkerChaos;
import io.thermocline.proxy.history.HistoryChecker.Anomaly;
import io.thermocline.proxy.history.HistoryChecker.Mode;
import io.thermocline.proxy.tiered.TierPair;
import io.thermocline.tiering.backup.BackupPoint;
import io.thermocline.tiering.backup.RestoreSync;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 43 item 1: a restore of the archive in the middle of a history (docs/backup.md, "Restoring the archive"). The
 * eight clients of {@link ConcurrentHistoryTest} run through two proxies all along, with the feeder, warmer and evictor
 * killed and restarted (until the reset; then without chaos, while the warmer refills the fast tier) and the archive
 * follower running: writes, a backup point and a copy of the archive taken after it, more writes,
 * {@code restore-sync --hold}, the archive replaced by the copy, {@code restore-sync}, the cutover back to tiered once
 * warm, more writes. Refusals while the fleet is held or switches are retried by the clients, as
 * an application does.
 *
 * <p>The restore splits the history in two, at the moment the hold returned (H): from then on no proxy serves a tiered
 * command until the archive is the copy, so an operation acknowledged after H took effect on the restored state, one
 * acknowledged before H on the state before it. Each part is checked on its own, linearizably:
 * <ul>
 *   <li>before: the operations invoked before H (one acknowledged after H is indeterminate here: its effect may have
 *       come before), and the copy as one read of everything, invoked when the backup point started and completed
 *       when the copy was read: it holds every write acknowledged before the point, and only versions some write wrote
 *       by the end of the copy;</li>
 *   <li>after: the copy, as an insert acknowledged just before H, then the operations completed after H (invoked, for
 *       the checker, no earlier than H): every read during or after the restore reflects the copy and the writes
 *       acknowledged before it, and no version from after the copy (a write lost with the fast tier's future) comes
 *       back, alone or mixed with restored ones; the final state, archive and proxy, reflects every write acknowledged
 *       after the restore.</li>
 * </ul>
 * Seeds: {@code -Dhistory.restoreSeeds=1-200} ({@code 1-2} by default); {@code -Dhistory.operations=N} operations per
 * client and phase.
 */
class RestoreHistoryTest {

    /** The process that takes the backup (the adopted documents are -1's). */
    static final int BACKUP = -2;

    /** Each client's pause between two operations. */
    static final Duration THINK = Duration.ofMillis(10);

    static LongStream restoreSeeds() {
        return Seeds.from("history.restoreSeeds", "1-2");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("restoreSeeds")
    @Timeout(600)
    void aRestoreMidHistoryKeepsEveryWriteBeforeTheBackupPointAndNothingAfterTheCopy(long seed) throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        HistoryClient.switchRefusals.set(0);
        List<BsonDocument> backup = new ArrayList<>();
        Map<String, List<Doc>> finals;
        long heldAt;
        long tieredAt;
        String workersRan;
        try (TierPair tiers = TierPair.open();
                TieredFleet fleet = new TieredFleet(tiers, 2, "linearizable");
                MongoClient followerArchive = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(tiers.archiveUri()))
                        .readConcern(ReadConcern.MAJORITY)
                        .build())) {
            ConcurrentHistoryTest.adopt(fleet, history, keys, random);
            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start();
                    ArchiveFollower follower = new ArchiveFollower(
                                    fleet.fastWorkers,
                                    followerArchive,
                                    List.of(TieredFleet.POLICY),
                                    "history-follower",
                                    Duration.ofMillis(20))
                            .start()) {
                AtomicBoolean stop = new AtomicBoolean();
                CompletableFuture<Void> load = CompletableFuture.runAsync(() -> {
                    try {
                        ConcurrentHistoryTest.runClients(fleet, history, keys, random, 0, true, false, () -> {
                            // a client's think time: the restore's phases last seconds, the history stays checkable
                            LockSupport.parkNanos(THINK.toNanos());
                            return !stop.get();
                        });
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                int perPhase = ConcurrentHistoryTest.CLIENTS * ConcurrentHistoryTest.OPERATIONS / 2;
                awaitOps(history, load, Long.MIN_VALUE, perPhase);

                // the backup: a backup point, then the archive's storage copied (as mongodump would), while the clients
                // write
                Outcome copied = history.run(BACKUP, Op.NO_SESSION, new Call.Scan(new Filter.All()), () -> {
                    new BackupPoint(fleet.fastWorkers, fleet.archiveWorkers, "history", Clock.systemUTC())
                            .await(Duration.ofSeconds(120), Duration.ofSeconds(60), Duration.ofSeconds(10), line -> {});
                    fleet.archiveOrders().find().into(backup);
                    return new Outcome.Found(
                            backup.stream().map(HistoryClient::doc).toList());
                });
                assertThat(copied).as("the backup point and the copy").isInstanceOf(Outcome.Found.class);
                awaitOps(history, load, Long.MIN_VALUE, perPhase);

                RestoreSync restore = new RestoreSync(
                        fleet.fastWorkers,
                        fleet.archiveWorkers,
                        List.of(TieredFleet.POLICY),
                        Clock.systemUTC(),
                        line -> {});
                restore.hold(Duration.ofSeconds(120));
                heldAt = System.nanoTime();
                // the restore (mongorestore --drop): the archive becomes the copy
                fleet.archiveOrders().drop();
                if (!backup.isEmpty()) {
                    fleet.archiveOrders().insertMany(backup);
                }
                restore.resync();
                // restore-sync --cutover: once the warmer has filled the collection from the restored archive, back to
                // tiered.
                // The workers run without chaos from here: each copy-up of the refill waits for the feeder (the reset's
                // drop
                // fence), and a warmer killed every few steps may not finish while the clients write on a loaded
                // machine
                chaos.quiesce();
                ModeStore modes = new ModeStore(new MetadataStore(fleet.fastWorkers));
                awaitWarmed(new MetadataStore(fleet.fastWorkers));
                modes.request(io.thermocline.config.Mode.TIERED, false, RestoreSync.HOLDER);
                awaitPhase(modes, Phase.TIERED);
                tieredAt = System.nanoTime();
                awaitOps(history, load, tieredAt, perPhase);
                stop.set(true);
                load.get();
                fleet.sync();
                finals = ConcurrentHistoryTest.finalStates(fleet);
                workersRan = "worker crashes=" + chaos.crashes.get() + " kills=" + chaos.kills.get();
            }
        }
        List<Op> ops = history.ops();
        List<Op> before = before(ops, heldAt);
        List<Op> after = after(ops, heldAt, backup);
        List<Anomaly> anomalies = new ArrayList<>(HistoryChecker.check(before, Mode.LINEARIZABLE, Map.of()));
        anomalies.addAll(HistoryChecker.check(after, Mode.LINEARIZABLE, finals));
        long tiered = ops.stream()
                .filter(op -> op.invokedAt() > tieredAt && op.acknowledged())
                .count();
        long restoring = after.stream()
                .filter(op -> op.process() != BACKUP && op.completedAt() < tieredAt && op.acknowledged())
                .count();
        String summary = String.format(
                "seed %d (restore, linearizable): %d ops (%s); before the hold %d, after it %d (%d acknowledged"
                        + " before Tiered, %d invoked after); backup of %d documents; refusals retried=%d, %s, %d anomalies %s, %.1f s",
                seed,
                ops.size(),
                ConcurrentHistoryTest.outcomes(ops),
                before.size(),
                after.size(),
                restoring,
                tiered,
                backup.size(),
                HistoryClient.switchRefusals.get(),
                workersRan,
                anomalies.size(),
                anomalies.stream().collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                (System.nanoTime() - started) / 1e9);
        System.out.println("RestoreHistoryTest " + summary);
        assertThat(tiered)
                .as("operations acknowledged on the tiered fleet after the restore: %s", summary)
                .isPositive();
        ConcurrentHistoryTest.assertNoAnomaly(
                "history.restoreSeeds",
                seed,
                Mode.LINEARIZABLE,
                new ConcurrentHistoryTest.Result(ops, anomalies, summary));
    }

    /**
     * The history up to the hold: what was invoked before it. An operation acknowledged after the hold ran on the restored
     * state; here it may also have taken effect before (a first attempt whose reply was lost), so it is indeterminate.
     */
    static List<Op> before(List<Op> ops, long heldAt) {
        List<Op> before = new ArrayList<>();
        for (Op op : ops) {
            if (op.invokedAt() >= heldAt) {
                continue;
            }
            if (op.completedAt() < heldAt || !op.acknowledged()) {
                before.add(op);
            } else if (op.call().isWrite()) {
                before.add(new Op(
                        op.index(),
                        op.process(),
                        op.session(),
                        op.invokedAt(),
                        op.completedAt(),
                        op.call(),
                        new Outcome.Indeterminate("acknowledged after the restore", true)));
            }
        }
        return before;
    }

    /**
     * The history from the restore on: the backup, as an insert acknowledged just before the hold returned, then every
     * operation that completed after it, none taking effect before it (the proxies served no tiered command in between).
     */
    static List<Op> after(List<Op> ops, long heldAt, List<BsonDocument> backup) {
        List<Op> after = new ArrayList<>();
        List<Doc> restored = backup.stream().map(HistoryClient::doc).toList();
        after.add(new Op(
                -1,
                BACKUP,
                Op.NO_SESSION,
                heldAt - 2,
                heldAt - 1,
                new Call.Insert(restored, true),
                Outcome.Written.of(restored.size())));
        for (Op op : ops) {
            if (op.completedAt() > heldAt && op.process() != BACKUP) {
                after.add(new Op(
                        op.index(),
                        op.process(),
                        op.session(),
                        Math.max(op.invokedAt(), heldAt),
                        op.completedAt(),
                        op.call(),
                        op.outcome()));
            }
        }
        return after;
    }

    /** Until {@code count} more operations invoked after {@code since} are recorded (or the clients stopped). */
    private static void awaitOps(History history, CompletableFuture<Void> load, long since, int count)
            throws Exception {
        int from = (int)
                history.ops().stream().filter(op -> op.invokedAt() > since).count();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (history.ops().stream().filter(op -> op.invokedAt() > since).count() < from + count) {
            if (load.isDone()) {
                load.get(); // the clients' failure, if any
                throw new AssertionError("the clients stopped");
            }
            assertThat(System.nanoTime())
                    .as("%d operations within 120 s", count)
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /** The warmer finished the collection again, after the reset. */
    private static void awaitWarmed(MetadataStore store) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            NamespaceState state = store.namespace(TieredFleet.POLICY.namespace());
            if (state.warmer() != null && state.warmer().complete()) {
                return;
            }
            assertThat(System.nanoTime())
                    .as("the warmer refilled the fast tier: %s", state)
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static ModeDocument awaitPhase(ModeStore modes, Phase phase) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            ModeDocument d = modes.read();
            if (d.phase() == phase) {
                return d;
            }
            assertThat(System.nanoTime())
                    .as("the fleet reaches %s: %s", phase, d.toBson().toJson())
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
