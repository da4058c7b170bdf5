package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;
import io.thermocline.proxy.WireClient;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.chaos.WorkerChaos;
import io.thermocline.proxy.history.HistoryChecker.Anomaly;
import io.thermocline.proxy.history.HistoryChecker.Mode;
import io.thermocline.proxy.tiered.TierPair;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.MetadataStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.awaitility.Awaitility;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 37's workload: updates followed closely by deletes of the same keys, while readers scan the
 * buckets those keys are in (archive-routed: a bucket filter proves no age bound) and read them by key.
 * The feeder's {@code updateLookup} of such an update often runs after the delete and finds nothing; a
 * reader whose barrier falls between the update and the delete must still see the update (or the
 * delete), never the version before it. The feeder, evictor and warmer are killed between any two I/O
 * steps ({@link WorkerChaos}), and the archive refuses short runs of writes ({@link ArchiveWriteRefusals}), so
 * the feeder retries batches from its checkpoint and looks their events up again, later.
 *
 * <p>Seeds: {@code -Dhistory.updateDeleteSeeds=1-500} ({@code 8-9} by default: on the code
 * before the fix, seeds 8 and 9 of 1-20 each had a scan that returned the version before an acknowledged update); {@code -Dhistory.operations=N}
 * operations per client.
 */
class UpdateThenDeleteHistoryTest {

    static final int WRITERS = 5;
    static final int READERS = 4;

    static LongStream updateDeleteSeeds() {
        return Seeds.from("history.updateDeleteSeeds", "8-9"); // both saw the anomaly on the code before the fix
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("updateDeleteSeeds")
    @Timeout(600)
    void aReadBetweenAnUpdateAndTheDeleteOfItsKeySeesTheUpdate(long seed) throws Exception {
        runWithRefusals(seed, TierPair::open, "history.updateDeleteSeeds", "update then delete");
    }

    /**
     * Runs the workload on a two-proxy fleet over {@code tierPair}'s tiers, with workers killed between I/O steps and the
     * archive refusing short runs of writes, then checks the history.
     */
    private static void runWithRefusals(
            long seed, java.util.function.Supplier<TierPair> tierPair, String property, String scenario)
            throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        Map<String, List<Doc>> finals;
        String disturbed;
        try (TierPair tiers = tierPair.get();
                TieredFleet fleet = new TieredFleet(tiers, 2, "linearizable")) {
            ConcurrentHistoryTest.adopt(fleet, history, keys, random);
            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start()) {
                ArchiveWriteRefusals refusals = new ArchiveWriteRefusals(
                        tiers.embeddedArchive().orElseThrow().primary().port(), seed);
                refusals.start();
                try {
                    runClients(fleet, history, keys, random, null);
                } finally {
                    refusals.stop();
                }
                chaos.quiesce();
                finals = ConcurrentHistoryTest.finalStates(fleet);
                disturbed = "archive write refusals=" + refusals.spells.get() + ", worker crashes="
                        + chaos.crashes.get() + " kills=" + chaos.kills.get();
            }
        }
        List<Op> ops = history.ops();
        // an archive refusing writes answers OutOfDiskSpace to the proxy's own archive writes too: its answer, not an
        // anomaly
        List<Anomaly> anomalies = HistoryChecker.check(ops, Mode.LINEARIZABLE, finals).stream()
                .filter(a -> !(a.type() == HistoryChecker.AnomalyType.UNEXPECTED_ERROR
                        && a.message().contains("14031")))
                .toList();
        assertNoAnomaly(property, seed, scenario, ops, anomalies, disturbed, started);
    }

    /** Prints the run's summary line and fails on any anomaly, naming the seed to rerun. */
    private static void assertNoAnomaly(
            String property,
            long seed,
            String scenario,
            List<Op> ops,
            List<Anomaly> anomalies,
            String disturbed,
            long started) {
        String summary = String.format(
                "seed %d (%s, linearizable): %d ops (%s), %s, %d anomalies %s, %.1f s",
                seed,
                scenario,
                ops.size(),
                ConcurrentHistoryTest.outcomes(ops),
                disturbed,
                anomalies.size(),
                anomalies.stream().collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                (System.nanoTime() - started) / 1e9);
        System.out.println("UpdateThenDeleteHistoryTest " + summary);
        ConcurrentHistoryTest.assertNoAnomaly(
                property, seed, Mode.LINEARIZABLE, new ConcurrentHistoryTest.Result(ops, anomalies, summary));
    }

    static LongStream lostHistorySeeds() {
        return Seeds.from("history.lostHistorySeeds", "1");
    }

    /**
     * The same workload on a fast tier whose oplog keeps only {@link #SHORT_OPLOG} entries, so that a feeder killed
     * between I/O steps ({@link WorkerChaos}) often restarts behind it: the stream's history is lost and the feeder
     * resyncs the archive from the fast tier while clients write and read, and the archive's short runs of refused
     * writes make some resyncs fail midway (a resync that failed before its scan left its stream open and published
     * mirrored-through past writes the archive lacked, {@code HistoryLossIntegrationTest}). Every read must still see
     * every write acknowledged before it. Seeds: {@code -Dhistory.lostHistorySeeds} ({@code 1}).
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("lostHistorySeeds")
    @Timeout(600)
    void aReadSeesEveryEarlierWriteWhileTheFeederLosesItsHistoryAndResyncs(long seed) throws Exception {
        runWithRefusals(
                seed, () -> TierPair.embeddedWithFastOplogOf(SHORT_OPLOG), "history.lostHistorySeeds", "lost history");
    }

    /** Oplog entries the lost-history scenario's fast tier keeps (its probes alone write 20 a second). */
    private static final int SHORT_OPLOG = 300;

    static LongStream deadLetterSeeds() {
        return Seeds.from("history.deadLetterSeeds", "1");
    }

    /**
     * The same workload while the archive refuses some writes for good: a sparse unique index on {@code tag} that only
     * the archive has, half the adopted documents holding tags, and one write in eight setting a tag. A write whose tag an archived document holds is acknowledged by the fast tier and refused by the archive
     * (E11000): a dead letter, which the key's delete (or a retry after the other document's) closes. While one is
     * open the archive lacks an acknowledged write, so mirrored-through must not pass it: a scan then must see the
     * update or wait (and may fail retryably), never the version before it. At the end the index is dropped (the
     * operator fixes the cause) and every letter closes. Seeds: {@code -Dhistory.deadLetterSeeds} ({@code 1}).
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("deadLetterSeeds")
    @Timeout(600)
    void aReadNeverSeesTheVersionBeforeAWriteTheArchiveRefusedForGood(long seed) throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        Map<String, List<Doc>> finals;
        String disturbed;
        try (TierPair tiers = TierPair.open();
                TieredFleet fleet = new TieredFleet(tiers, 2, "linearizable")) {
            fleet.archiveOrders()
                    .createIndex(
                            Indexes.ascending(TAG),
                            new IndexOptions().unique(true).sparse(true));
            ConcurrentHistoryTest.adopt(fleet, history, keys, random);
            for (int key = 1; key <= TAGS / 2; key++) {
                fleet.archiveOrders().updateOne(Filters.eq("_id", key), Updates.set(TAG, "t" + key));
            }
            // one more archived document, never picked by a writer, holds the tag the first writer's first insert takes
            int holder = keys.nextKey.getAndIncrement();
            Doc held = keys.version(holder, random);
            history.run(-1, Op.NO_SESSION, new Call.Insert(List.of(held), true), () -> {
                fleet.archiveOrders().insertOne(HistoryClient.bson(held).append(TAG, new BsonString(HELD_TAG)));
                return Outcome.Written.of(1);
            });
            DeadLetters letters = new DeadLetters(new MetadataStore(fleet.fastWorkers));
            long refused;
            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start()) {
                runClients(fleet, history, keys, random, chaos::deadLettered);
                // every refusal counted (a letter may open and close within one batch: sampling missed some runs')
                refused = chaos.deadLettered();
                // the operator fixes the cause: the feeder's retries land what is left and close every letter
                fleet.archiveOrders().dropIndex(Indexes.ascending(TAG));
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> letters.count() == 0);
                chaos.quiesce();
                finals = ConcurrentHistoryTest.finalStates(fleet);
                disturbed = "writes the archive refused=" + refused + ", worker crashes=" + chaos.crashes.get()
                        + " kills=" + chaos.kills.get();
            }
            assertThat(refused)
                    .as("the archive refused some writes for good (the scenario happened)")
                    .isPositive();
        }
        List<Op> ops = history.ops();
        assertNoAnomaly(
                "history.deadLetterSeeds",
                seed,
                "dead letters",
                ops,
                HistoryChecker.check(ops, Mode.LINEARIZABLE, finals),
                disturbed,
                started);
    }

    /** A field with a sparse unique index only the archive has, and how many tags there are. */
    private static final String TAG = "tag";

    private static final int TAGS = 40;
    /** The tag of the one archived document no writer touches. */
    private static final String HELD_TAG = "held";

    /**
     * A tag for one write in eight when {@code tagged}, half of them held by an adopted document (a few refused writes
     * a run, each open for a moment: enough to test the hold, few enough that most reads are still answered).
     */
    private static String tag(boolean tagged, Random random) {
        return tagged && random.nextInt(8) == 0 ? "t" + (1 + random.nextInt(TAGS)) : null;
    }

    /**
     * Writers insert a key, update it (or an older one) and delete it at once, {@code history.operations / 2} times
     * each; readers scan and read until the writers are done.
     */
    private static void runClients(
            TieredFleet fleet, History history, HistoryClient.Keys keys, Random random, LongSupplier refusals)
            throws Exception {
        List<MongoClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + READERS);
        AtomicInteger writersLeft = new AtomicInteger(WRITERS);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int process = 0; process < WRITERS + READERS; process++) {
                MongoClient client = MongoClients.create(fleet.uri(List.of(process % 2)));
                clients.add(client);
                MongoCollection<BsonDocument> orders = client.getDatabase(TieredFleet.POLICY.database())
                        .getCollection(TieredFleet.POLICY.collection(), BsonDocument.class);
                Random own = new Random(random.nextLong());
                int id = process;
                if (process < WRITERS) {
                    running.add(pool.submit(() -> {
                        try {
                            write(id, orders, history, keys, own, refusals);
                        } finally {
                            writersLeft.decrementAndGet();
                        }
                        return null;
                    }));
                } else {
                    running.add(pool.submit(() -> read(id, orders, history, keys, own, writersLeft)));
                }
            }
            for (Future<?> future : running) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(MongoClient::close);
        }
    }

    private static void write(
            int process,
            MongoCollection<BsonDocument> orders,
            History history,
            HistoryClient.Keys keys,
            Random random,
            LongSupplier refusals)
            throws InterruptedException {
        boolean tagged = refusals != null;
        for (int i = 0; i < ConcurrentHistoryTest.OPERATIONS / 2; i++) {
            int fresh = keys.nextKey.getAndIncrement();
            Doc inserted = keys.version(fresh, random);
            // the first insert of the first writer takes the tag of the document no writer touches: a refusal for sure,
            // waited for below (a key inserted and deleted within one of the feeder's batches is never written at all)
            boolean forced = tagged && process == 0 && i == 0;
            String insertTag = forced ? HELD_TAG : tag(tagged, random);
            history.run(process, Op.NO_SESSION, new Call.Insert(List.of(inserted), true), () -> {
                BsonDocument document = HistoryClient.bson(inserted);
                if (insertTag != null) {
                    document.append(TAG, new BsonString(insertTag));
                }
                orders.insertOne(document);
                return Outcome.Written.of(1);
            });
            if (forced) {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> refusals.getAsLong() > 0);
            }
            keys.used(fresh);
            // half of them a key just inserted (hot, in the feeder's current batches), half any key (cold ones promoted
            // first)
            int key = random.nextBoolean() ? fresh : keys.pick(random);
            Doc updated = keys.version(key, random);
            String updateTag = tag(tagged, random);
            Bson values = Updates.combine(
                    Updates.set("value", updated.value()),
                    Updates.set(TieredFleet.POLICY.ageField(), new BsonDateTime(updated.age())));
            Bson set = updateTag == null ? values : Updates.combine(values, Updates.set(TAG, updateTag));
            history.run(
                    process,
                    Op.NO_SESSION,
                    new Call.Update(updated),
                    () -> Outcome.Written.of(
                            orders.updateOne(Filters.eq("_id", key), set).getMatchedCount()));
            // readers' barrier probes fall in between; a feeder that replays the pair looks the update up after the
            // delete
            Thread.sleep(random.nextInt(250));
            history.run(
                    process,
                    Op.NO_SESSION,
                    new Call.Delete(key),
                    () -> Outcome.Written.of(
                            orders.deleteOne(Filters.eq("_id", key)).getDeletedCount()));
            Thread.sleep(random.nextInt(100));
        }
    }

    /** Mostly scans of a bucket (archive-routed), some counts and point reads, until the writers are done. */
    private static void read(
            int process,
            MongoCollection<BsonDocument> orders,
            History history,
            HistoryClient.Keys keys,
            Random random,
            AtomicInteger writersLeft) {
        while (writersLeft.get() > 0) {
            int choice = random.nextInt(10);
            Filter bucket = new Filter.Bucket(random.nextInt(HistoryClient.BUCKETS));
            if (choice < 7) {
                history.run(process, Op.NO_SESSION, new Call.Scan(bucket), () -> {
                    List<Doc> docs = new ArrayList<>();
                    for (BsonDocument document : orders.find(HistoryClient.bson(bucket))) {
                        docs.add(HistoryClient.doc(document));
                    }
                    return new Outcome.Found(docs);
                });
            } else if (choice < 9) {
                history.run(
                        process,
                        Op.NO_SESSION,
                        new Call.Count(bucket),
                        () -> new Outcome.Counted(orders.countDocuments(HistoryClient.bson(bucket))));
            } else {
                int key = keys.pick(random);
                history.run(process, Op.NO_SESSION, new Call.PointRead(key), () -> {
                    List<Doc> docs = new ArrayList<>();
                    for (BsonDocument document : orders.find(Filters.eq("_id", key))) {
                        docs.add(HistoryClient.doc(document));
                    }
                    return new Outcome.Found(docs);
                });
            }
        }
    }

    /**
     * Short runs of refused or slow writes on the archive (OutOfDiskSpace, or a block of 200-800 ms, for the next
     * few update and delete commands, the feeder's bulk writes among them): the feeder retries its batch from the
     * checkpoint, or falls behind while the stream's events wait, and looks their documents up later.
     */
    static final class ArchiveWriteRefusals {
        private final int port;
        private final Random random;
        private final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicInteger spells = new AtomicInteger();
        private Thread thread;

        ArchiveWriteRefusals(int port, long seed) {
            this.port = port;
            this.random = new Random(seed * 977 + 5);
        }

        void start() {
            thread = new Thread(
                    () -> {
                        try {
                            while (running.get()) {
                                Thread.sleep(200 + random.nextInt(800));
                                // refused (the batch is retried from the checkpoint), or slow (events pile up behind
                                // it, looked up late)
                                String data = random.nextBoolean()
                                        ? "{errorCode: 14031, failCommands: ['update', 'delete']}"
                                        : "{blockConnection: true, blockTimeMS: " + (200 + random.nextInt(600))
                                                + ", failCommands: ['update', 'delete']}";
                                failPoint("{configureFailPoint: 'failCommand', mode: {times: " + (1 + random.nextInt(3))
                                        + "}, data: " + data + ", $db: 'admin'}");
                                spells.incrementAndGet();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (Exception e) {
                            throw new IllegalStateException("archive write refusals", e);
                        }
                    },
                    "archive-write-refusals");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws Exception {
            running.set(false);
            thread.interrupt();
            thread.join(30_000);
            failPoint("{configureFailPoint: 'failCommand', mode: 'off', $db: 'admin'}");
        }

        private void failPoint(String command) throws Exception {
            try (WireClient direct = new WireClient(port)) {
                direct.command(BsonDocument.parse(command));
            }
        }
    }
}
