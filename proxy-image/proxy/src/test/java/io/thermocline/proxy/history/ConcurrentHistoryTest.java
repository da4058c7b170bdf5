package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.proxy.chaos.FastTierFailovers;
import io.thermocline.proxy.chaos.ReplicationChaos;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.chaos.WorkerChaos;
import io.thermocline.proxy.history.HistoryChecker.Anomaly;
import io.thermocline.proxy.history.HistoryChecker.Mode;
import io.thermocline.proxy.tiered.TierPair;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Invariants 1, 2 and 4 under real concurrency, Jepsen-style: eight clients (each with its own
 * driver client, three with an explicit causally consistent session) over two proxies, against the
 * tiered stack with the feeder, evictor and warmer killed between any two I/O steps and restarted,
 * documents placed around the window edge and moved across it. Every operation is recorded and the
 * {@link HistoryChecker} verifies the history against the real-time order of acknowledged writes.
 *
 * <p>Seeds: {@code -Dhistory.seeds=1-5} or {@code -Dhistory.seeds=7,19} ({@code 1-3} by default);
 * {@code -Dhistory.operations=N} operations per client. A failure prints the seed and the
 * offending part of the history.
 */
class ConcurrentHistoryTest {

    static final int CLIENTS = 8;
    /** Clients 0-2 use an explicit causally consistent session; 0, 1 and 6 spread over both proxies. */
    static final int SESSIONS = 3;

    static final List<List<Integer>> PROXIES_OF_CLIENT = List.of(
            List.of(0, 1), List.of(0, 1), List.of(0), List.of(1), List.of(0), List.of(1), List.of(0, 1), List.of(0));
    static final int OPERATIONS = Integer.getInteger("history.operations", 40);

    /**
     * Fixes of issue 10 that live on other branches. Until one is merged, the workload leaves out what
     * would trip it, or the assertion tolerates it (and prints how often); after merging, add its name
     * to the default here (or run with {@code -Dhistory.fixed=batches,sessions,deletes,copyups}):
     * <ul>
     *   <li>{@code batches}: batch inserts around an existing key (bug 2: a partial failure reports an
     *       {@code n} and loses the acknowledged documents; an archived {@code _id} is not refused);</li>
     *   <li>{@code sessions}: reads in causally consistent sessions are answered (bug 7: "RawBsonDocument
     *       instances are immutable");</li>
     *   <li>{@code deletes}: no acknowledged delete is undone and a delete's {@code n} is right (bug 1: a
     *       delete of an archived document racing a warmer copy or a promotion leaves the copy alive;
     *       bug 6: a delete racing a promotion of its target reports n=0 and deletes nothing);</li>
     *   <li>{@code copyups}: a write racing a copy-up of the same {@code _id} is not failed with
     *       OperationFailed (96) wrapping the proxy's own E11000 (found by this test, not in the issue's
     *       list; fixed by the guarded copy starting over on a duplicate key, see {@code WriteCopyUpRaceTest}).</li>
     *   <li>{@code hotinserts}: an insert of a client-chosen {@code _id} that an older document holds is refused
     *       with E11000 even when the feeder mirrors and the evictor removes that document while the insert looks
     *       the {@code _id} up (fast tier first, then archive: {@code WriteResolutionRaceTest}).</li>
     * </ul>
     * The linearizable checks need no switch: they run as soon as the proxy has {@code proxy.readConsistency}.
     */
    static final Set<String> FIXED =
            Set.of(System.getProperty("history.fixed", "batches,sessions,deletes,copyups,hotinserts")
                    .split(","));

    static LongStream seeds() {
        return Seeds.from("history.seeds", "1-3");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void sessionGuaranteesHoldAndNoAcknowledgedWriteIsLost(long seed) throws Exception {
        assertNoAnomaly("history.seeds", seed, Mode.SESSION, run(seed, "session", Mode.SESSION, TierPair::open));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void everyReadReflectsEveryWriteAcknowledgedBeforeIt(long seed) throws Exception {
        assertNoAnomaly(
                "history.seeds", seed, Mode.LINEARIZABLE, run(seed, "linearizable", Mode.LINEARIZABLE, TierPair::open));
    }

    /**
     * The linearizable run on a three-member archive whose secondaries serve the archive-routed reads
     * ({@code secondaryReads: offload}) while they lag, pause and die ({@link ReplicationChaos}): a read
     * served by a member behind its point shows up as a stale or non-monotonic read.
     * Seeds: {@code -Dhistory.secondarySeeds} ({@code 1} by default).
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("secondarySeeds")
    void secondaryReadsOfLaggingArchiveMembersReflectEveryEarlierWrite(long seed) throws Exception {
        assertNoAnomaly(
                "history.secondarySeeds",
                seed,
                Mode.LINEARIZABLE,
                run(seed, "linearizable", Mode.LINEARIZABLE, () -> TierPair.embedded(3), "offload"));
    }

    static LongStream secondarySeeds() {
        return Seeds.from("history.secondarySeeds", "1");
    }

    /**
     * The linearizable run on a three-member fast tier whose primary steps down every 0.5-2.5 s
     * ({@link FastTierFailovers}): reads that pass the barrier on the proxy's write stream and a ping of the
     * fast tier's present must follow each new primary. Seeds: {@code -Dhistory.failoverSeeds=1-20} ({@code 1} by default).
     *
     * <p>On 2026-12-07 seed 1 on the on-disk engine saw a STALE_READ: a point read found the key gone on the fast tier's
     * primary (a delete applied there, not yet majority-committed), read the fences at the majority point, found none,
     * skipped the barrier and answered the archive's version from before an acknowledged update. The fence read now
     * waits until a majority holds what the fast-tier read saw ({@code PointReadBeforeMajorityTest}). Commands of the
     * tiered layer caught by a step-down were answered OperationFailed (96), which drivers do not retry; they now keep
     * the state change code and the retry labels ({@code ErrorMappingTest}).
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("failoverSeeds")
    void everyReadReflectsEveryEarlierWriteAcrossFastTierFailovers(long seed) throws Exception {
        assertNoAnomaly(
                "history.failoverSeeds",
                seed,
                Mode.LINEARIZABLE,
                run(seed, "linearizable", Mode.LINEARIZABLE, () -> TierPair.embeddedFast(3), null, true));
    }

    static LongStream failoverSeeds() {
        return Seeds.from("history.failoverSeeds", "1");
    }

    static Result run(long seed, String readConsistency, Mode mode, Supplier<TierPair> tierPair) throws Exception {
        return run(seed, readConsistency, mode, tierPair, null);
    }

    /** A checked history: what the checker found and what the run did. */
    record Result(List<Op> history, List<Anomaly> anomalies, String summary) {}

    /** @param secondaryReads the policy's {@code secondaryReads} (then the archive's secondaries are disturbed), or null */
    static Result run(long seed, String readConsistency, Mode mode, Supplier<TierPair> tierPair, String secondaryReads)
            throws Exception {
        return run(seed, readConsistency, mode, tierPair, secondaryReads, false);
    }

    /** @param fastFailovers whether the fast tier's primary steps down again and again meanwhile ({@link FastTierFailovers}) */
    static Result run(
            long seed,
            String readConsistency,
            Mode mode,
            Supplier<TierPair> tierPair,
            String secondaryReads,
            boolean fastFailovers)
            throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        Map<String, List<Doc>> finals;
        String workersRan;
        try (TierPair tiers = tierPair.get();
                TieredFleet fleet = new TieredFleet(tiers, 2, readConsistency, secondaryReads)) {
            adopt(fleet, history, keys, random);
            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start()) {
                ReplicationChaos replication = secondaryReads == null
                        ? null
                        : new ReplicationChaos(tiers.embeddedArchive().orElseThrow(), seed).start();
                FastTierFailovers failovers = fastFailovers
                        ? new FastTierFailovers(tiers.embeddedFast().orElseThrow(), seed).start()
                        : null;
                try {
                    runClients(fleet, history, keys, random);
                } finally {
                    if (failovers != null) {
                        failovers.close();
                    }
                    if (replication != null) {
                        replication.close();
                    }
                    chaos.quiesce();
                }
                finals = finalStates(fleet);
                workersRan = "worker crashes=" + chaos.crashes.get() + " kills=" + chaos.kills.get()
                        + (failovers == null ? "" : " fast-tier failovers=" + failovers.failovers.get()) + " "
                        + barrierOutcomes(fleet)
                        + (replication == null
                                ? ""
                                : " secondary disturbances=" + replication.disturbances.get() + " secondary reads="
                                        + secondaryReadsServed(fleet));
            }
        }
        List<Op> ops = history.ops();
        List<Anomaly> anomalies = HistoryChecker.check(ops, mode, finals);
        String summary = String.format(
                "seed %d (%s, readConsistency=%s): %d ops (%s), %s, %d anomalies %s, %.1f s",
                seed,
                mode,
                readConsistency,
                ops.size(),
                outcomes(ops),
                workersRan,
                anomalies.size(),
                anomalies.stream().collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                (System.nanoTime() - started) / 1e9);
        System.out.println("ConcurrentHistoryTest " + summary);
        return new Result(ops, anomalies, summary);
    }

    /** How the fleet's archive-routed reads passed the read barrier (quiet: no unmirrored write to wait for, no probe). */
    static String barrierOutcomes(TieredFleet fleet) {
        long speculated = 0;
        long dropped = 0;
        long quiet = 0;
        long waited = 0;
        long probed = 0;
        for (var proxy : fleet.proxies) {
            io.thermocline.proxy.causal.ReadBarrier.Counts c =
                    proxy.tieredRouting().orElseThrow().readBarrierCounts();
            speculated += c.speculated();
            dropped += c.speculationsDropped();
            quiet += c.quiet();
            waited += c.waitedForFeeder();
            probed += c.probed() + c.immediate();
        }
        return "barrier speculated=" + speculated + " (dropped " + dropped + ") quiet=" + quiet + " waited=" + waited
                + " probed=" + probed;
    }

    /** Archive-routed reads the fleet's secondaries served. */
    private static long secondaryReadsServed(TieredFleet fleet) throws java.io.IOException {
        long total = 0;
        for (var proxy : fleet.proxies) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            proxy.metrics().writeTo(out);
            for (String line :
                    out.toString(java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                if (line.startsWith("thermocline_proxy_secondary_read_choices_total{")
                        && line.contains("member=\"secondary\"")) {
                    total += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
        }
        return total;
    }

    /** The clients, each on its own thread with its own driver client, until each ran its operations. */
    private static void runClients(TieredFleet fleet, History history, HistoryClient.Keys keys, Random random)
            throws Exception {
        runClients(fleet, history, keys, random, OPERATIONS, false, false, () -> false);
    }

    /** As above, {@code operations} each (the mix goes on while {@code more}), {@code readsOnly} ({@link HistoryClient#runReads}) or the mix; {@code retrySwitchRefusals}: as {@link HistoryClient}'s. */
    static void runClients(
            TieredFleet fleet,
            History history,
            HistoryClient.Keys keys,
            Random random,
            int operations,
            boolean retrySwitchRefusals,
            boolean readsOnly,
            java.util.function.BooleanSupplier more)
            throws Exception {
        List<MongoClient> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int process = 0; process < CLIENTS; process++) {
                MongoClient client = MongoClients.create(fleet.uri(PROXIES_OF_CLIENT.get(process)));
                clients.add(client);
                ClientSession session = process < SESSIONS
                        ? client.startSession(ClientSessionOptions.builder()
                                .causallyConsistent(true)
                                .build())
                        : null;
                MongoCollection<BsonDocument> orders = client.getDatabase(TieredFleet.POLICY.database())
                        .getCollection(TieredFleet.POLICY.collection(), BsonDocument.class);
                HistoryClient worker = new HistoryClient(
                        process,
                        session,
                        orders,
                        history,
                        keys,
                        new Random(random.nextLong()),
                        FIXED.contains("batches"),
                        retrySwitchRefusals);
                running.add(pool.submit(() -> {
                    if (readsOnly) {
                        worker.runReads(operations);
                    } else {
                        worker.run(operations, more);
                    }
                }));
            }
            for (Future<?> future : running) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(MongoClient::close);
        }
    }

    /** Every document, read in the archive directly and through a proxy, once the workers caught up. */
    static Map<String, List<Doc>> finalStates(TieredFleet fleet) {
        Map<String, List<Doc>> finals = new LinkedHashMap<>();
        finals.put("archive", all(fleet.archiveOrders()));
        try (MongoClient reader = MongoClients.create(fleet.uri(List.of(0)))) {
            finals.put(
                    "proxy",
                    all(reader.getDatabase(TieredFleet.POLICY.database())
                            .getCollection(TieredFleet.POLICY.collection(), BsonDocument.class)));
        }
        return finals;
    }

    /** The user's existing replica set: documents around the window edge, in the archive only. */
    static void adopt(TieredFleet fleet, History history, HistoryClient.Keys keys, Random random) {
        List<Doc> docs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            int key = keys.nextKey.getAndIncrement();
            docs.add(keys.version(key, random));
            keys.used(key);
        }
        history.run(-1, Op.NO_SESSION, new Call.Insert(docs, true), () -> {
            fleet.archiveOrders()
                    .insertMany(docs.stream().map(HistoryClient::bson).toList());
            return Outcome.Written.of(docs.size());
        });
    }

    private static List<Doc> all(MongoCollection<BsonDocument> collection) {
        List<Doc> docs = new ArrayList<>();
        for (BsonDocument document : collection.find()) {
            docs.add(HistoryClient.doc(document));
        }
        return docs;
    }

    /** Acknowledged and indeterminate operations per kind, e.g. "Update=80/3". */
    static String outcomes(List<Op> ops) {
        Map<String, int[]> byKind = new TreeMap<>();
        for (Op op : ops) {
            int[] counts = byKind.computeIfAbsent(op.call().getClass().getSimpleName(), k -> new int[2]);
            counts[op.acknowledged() ? 0 : 1]++;
        }
        return byKind.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue()[0] + "/" + e.getValue()[1] + "?")
                .collect(Collectors.joining(" "));
    }

    /** {@code seedsProperty}: the system property that reruns this seed (named in the failure). */
    static void assertNoAnomaly(String seedsProperty, long seed, Mode mode, Result result) {
        List<Anomaly> asserted =
                result.anomalies().stream().filter(a -> !knownUnfixed(a)).toList();
        List<Anomaly> tolerated = result.anomalies().stream()
                .filter(ConcurrentHistoryTest::knownUnfixed)
                .toList();
        if (!tolerated.isEmpty()) {
            System.out.printf(
                    "ConcurrentHistoryTest seed %d: tolerated until their fix is merged (see FIXED): %s%n%s",
                    seed,
                    tolerated.stream()
                            .collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                    HistoryChecker.explain(tolerated, result.history(), 2));
        }
        assertThat(asserted)
                .as(
                        "%s%nrerun: -D%s=%d%n%s",
                        result.summary(), seedsProperty, seed, HistoryChecker.explain(asserted, result.history(), 8))
                .isEmpty();
    }

    /** An anomaly of a bug whose fix is not on this branch yet (see {@link #FIXED}). */
    private static boolean knownUnfixed(Anomaly anomaly) {
        boolean bug7 = anomaly.type() == HistoryChecker.AnomalyType.UNEXPECTED_ERROR
                && anomaly.evidence().get(0).inSession()
                && anomaly.message().contains("RawBsonDocument instances are immutable");
        boolean bug1 = anomaly.type() == HistoryChecker.AnomalyType.DELETE_UNDONE;
        boolean bug6 = anomaly.type() == HistoryChecker.AnomalyType.WRONG_N
                && anomaly.evidence().get(0).call() instanceof Call.Delete;
        boolean copyUpRace = anomaly.type() == HistoryChecker.AnomalyType.UNEXPECTED_ERROR
                && anomaly.message().contains("the Thermocline proxy failed to forward")
                && anomaly.message().contains("E11000");
        boolean hotInsertOverCold = anomaly.type() == HistoryChecker.AnomalyType.WRONG_N
                && anomaly.evidence().get(0).call() instanceof Call.Insert
                && anomaly.message().startsWith("inserted but the key was present");
        return (bug7 && !FIXED.contains("sessions"))
                || ((bug1 || bug6) && !FIXED.contains("deletes"))
                || (copyUpRace && !FIXED.contains("copyups"))
                || (hotInsertOverCold && !FIXED.contains("hotinserts"));
    }
}
