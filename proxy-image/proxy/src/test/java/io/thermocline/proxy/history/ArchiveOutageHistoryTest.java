package io.thermocline.proxy.history;

import io.thermocline.proxy.WireClient;
import io.thermocline.proxy.chaos.Seeds;
import io.thermocline.proxy.chaos.TieredFleet;
import io.thermocline.proxy.chaos.WorkerChaos;
import io.thermocline.proxy.history.HistoryChecker.Anomaly;
import io.thermocline.proxy.history.HistoryChecker.Mode;
import io.thermocline.proxy.tiered.TierPair;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link ConcurrentHistoryTest}'s clients, proxies and worker chaos, while the archive keeps failing
 * ({@link ArchiveOutages}): stopped (it closes every connection, {@code hello} included), paused (every
 * data command held 1 s) and refusing writes ({@code OutOfDiskSpace}), in turns, with healthy spells
 * between. Refused operations are indeterminate; the checker proves that nothing acknowledged was lost
 * across the outages and that no read saw the future or a stale value (docs/faults.md).
 * Seeds: {@code -Dhistory.outageSeeds=1-20} ({@code 1,3} by default).
 */
class ArchiveOutageHistoryTest {

    static LongStream outageSeeds() {
        return Seeds.from("history.outageSeeds", "1,3"); // both with stopped spells the clients are refused in
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("outageSeeds")
    void noAcknowledgedWriteIsLostAndEveryReadIsCurrentAcrossArchiveOutages(long seed) throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        Map<String, List<Doc>> finals;
        String disturbed;
        try (TierPair tiers = TierPair.open(); TieredFleet fleet = new TieredFleet(tiers, 2, "linearizable")) {
            ConcurrentHistoryTest.adopt(fleet, history, keys, random);
            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start()) {
                ArchiveOutages outages = new ArchiveOutages(tiers.embeddedArchive().orElseThrow().primary().port(), seed);
                outages.start();
                try {
                    ConcurrentHistoryTest.runClients(fleet, history, keys, random, ConcurrentHistoryTest.OPERATIONS, false, false, () -> false);
                } finally {
                    outages.stop();
                }
                chaos.quiesce();
                finals = ConcurrentHistoryTest.finalStates(fleet);
                disturbed = "archive outages " + outages.spells + ", worker crashes=" + chaos.crashes.get() + " kills=" + chaos.kills.get();
            }
        }
        List<Op> ops = history.ops();
        // an archive refusing writes answers OutOfDiskSpace to what reaches it: its own answer, forwarded, not an anomaly
        List<Anomaly> anomalies = HistoryChecker.check(ops, Mode.LINEARIZABLE, finals).stream()
                .filter(a -> !(a.type() == HistoryChecker.AnomalyType.UNEXPECTED_ERROR && a.message().contains("14031"))).toList();
        String summary = String.format("seed %d (archive outages, linearizable): %d ops (%s), %s, %d anomalies %s, %.1f s", seed, ops.size(),
                ConcurrentHistoryTest.outcomes(ops), disturbed, anomalies.size(),
                anomalies.stream().collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                (System.nanoTime() - started) / 1e9);
        System.out.println("ArchiveOutageHistoryTest " + summary);
        ConcurrentHistoryTest.assertNoAnomaly("history.outageSeeds", seed, Mode.LINEARIZABLE, new ConcurrentHistoryTest.Result(ops, anomalies, summary));
    }

    /** The archive's member fails in turns, through its failCommand fail point, set over a bare connection. */
    static final class ArchiveOutages {
        enum Kind { STOPPED, PAUSED, REFUSING_WRITES }

        private static final String DATA = "['find', 'aggregate', 'count', 'distinct', 'insert', 'update', 'delete', 'findAndModify',"
                + " 'getMore', 'commitTransaction', 'abortTransaction']";
        private static final Map<Kind, String> FAIL = Map.of(
                Kind.STOPPED, "{closeConnection: true, failCommands: ['hello', 'isMaster', 'ismaster', 'ping', 'buildInfo', 'endSessions',"
                        + " 'killCursors', 'listIndexes', 'listCollections', 'saslStart', 'saslContinue', " + DATA.substring(1) + "}",
                Kind.PAUSED, "{blockConnection: true, blockTimeMS: 1000, failCommands: " + DATA + "}",
                Kind.REFUSING_WRITES, "{errorCode: 14031, failCommands: ['insert', 'update', 'delete', 'findAndModify']}");

        private final int port;
        private final Random random;
        private final AtomicBoolean running = new AtomicBoolean(true);
        final Map<Kind, Integer> spells = new EnumMap<>(Kind.class);
        private Thread thread;

        ArchiveOutages(int port, long seed) {
            this.port = port;
            this.random = new Random(seed * 31 + 7);
        }

        void start() {
            thread = new Thread(() -> {
                try {
                    while (running.get()) {
                        Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
                        failPoint("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: " + FAIL.get(kind) + ", $db: 'admin'}");
                        spells.merge(kind, 1, Integer::sum);
                        Thread.sleep(1000 + random.nextInt(6000)); // mostly past the proxy's outage confirmation (2 s): refusals
                        failPoint("{configureFailPoint: 'failCommand', mode: 'off', $db: 'admin'}");
                        Thread.sleep(300 + random.nextInt(1500));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    throw new IllegalStateException("archive outages", e);
                }
            }, "archive-outages");
            thread.setDaemon(true);
            thread.start();
        }

        /** Ends the outages with the archive healthy. */
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
