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
import io.thermocline.proxy.tiered.TierPair;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.mode.ShadowEvidence;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 16 under the history checker: the same eight clients over two proxies as {@link ConcurrentHistoryTest}
 * (feeder, warmer and evictor killed and restarted), first while the fleet shadows (the archive answers, the archive
 * follower keeps the fast tier in step, every read the fast tier could answer is compared there), then across the
 * cutover to tiered, requested while the clients run and let through by the evidence. Writes refused during
 * {@code CuttingOver} are retried by the clients as an application would; each is one operation in the history,
 * acknowledged only if an attempt succeeded. Seeds: {@code -Dhistory.shadowSeeds=1-3} ({@code 1-2} by default).
 */
@Timeout(600)
class ShadowHistoryTest {

    /** Every fast-tier-answerable read compared; a short quiet period and few comparisons for the cutover gate. */
    static final String SHADOW = "shadow: {sampleRate: 1, cutoverQuietPeriod: 2s, minComparisons: 5, queueCapacity: 10000}\n";

    static LongStream seeds() {
        return Seeds.from("history.shadowSeeds", "1-2");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shadowAnswersAsTheArchiveAndTheCutoverUnderLoadKeepsEveryAcknowledgedWrite(long seed) throws Exception {
        long started = System.nanoTime();
        History history = new History();
        HistoryClient.Keys keys = new HistoryClient.Keys();
        Random random = new Random(seed);
        HistoryClient.switchRefusals.set(0);
        Map<String, List<Doc>> finals;
        List<ShadowEvidence> evidence;
        long tieredAt;
        try (TierPair tiers = TierPair.open(); TieredFleet fleet = new TieredFleet(tiers, 2, "linearizable", null, SHADOW);
             MongoClient followerArchive = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(tiers.archiveUri())).readConcern(ReadConcern.MAJORITY).build())) {
            ConcurrentHistoryTest.adopt(fleet, history, keys, random);
            ModeStore modes = new ModeStore(new MetadataStore(fleet.fastWorkers));
            try (WorkerChaos chaos = new WorkerChaos(fleet, seed).start();
                 ArchiveFollower follower = new ArchiveFollower(fleet.fastWorkers, followerArchive, List.of(TieredFleet.POLICY),
                         "history-follower", Duration.ofMillis(20)).start()) {
                modes.request(io.thermocline.config.Mode.SHADOW, false, "test");
                awaitPhase(modes, Phase.SHADOWING);
                awaitWarmed(fleet);

                ConcurrentHistoryTest.runClients(fleet, history, keys, random, ConcurrentHistoryTest.OPERATIONS, true, false, () -> false);
                // under the write mix nearly every comparison is skipped: on this small key space the follower has applied a
                // later change of the result by the time the fast tier is read, so the answers differ and prove nothing
                // (docs/adoption.md); a burst of reads alone gives the comparator reads it can check
                ConcurrentHistoryTest.runClients(fleet, history, keys, random, ConcurrentHistoryTest.OPERATIONS / 2, true, true, () -> false);
                evidence = awaitComparisons(modes);

                // the cutover, requested (without override) once the clients are under way again
                int before = history.ops().size();
                AtomicLong tiered = new AtomicLong();
                // on until the clients made some operations on the tiered fleet
                BooleanSupplier more = () -> tiered.get() == 0 || System.nanoTime() - tiered.get() < 2_000_000_000L;
                CompletableFuture<Void> load = CompletableFuture.runAsync(() -> {
                    try {
                        ConcurrentHistoryTest.runClients(fleet, history, keys, random, ConcurrentHistoryTest.OPERATIONS, true, false, more);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                while (history.ops().size() < before + ConcurrentHistoryTest.CLIENTS * 3 && !load.isDone()) {
                    Thread.sleep(10);
                }
                modes.request(io.thermocline.config.Mode.TIERED, false, "test");
                awaitPhase(modes, Phase.TIERED);
                tieredAt = System.nanoTime();
                tiered.set(tieredAt);
                load.get();
                chaos.quiesce();
                finals = ConcurrentHistoryTest.finalStates(fleet);
                evidence = modes.evidence(); // including the comparisons made until the cutover
            }
        }
        List<Op> ops = history.ops();
        long afterCutover = ops.stream().filter(op -> op.invokedAt() > tieredAt).count();
        List<Anomaly> anomalies = HistoryChecker.check(ops, HistoryChecker.Mode.LINEARIZABLE, finals);
        long compared = evidence.stream().mapToLong(ShadowEvidence::compared).sum();
        String summary = String.format("seed %d (shadow, then tiered): %d ops (%s), %d invoked after Tiered, refusals retried=%d,"
                        + " errors %s, shadow compared=%d skipped=%d diverged=%d, %d anomalies %s, %.1f s",
                seed, ops.size(), ConcurrentHistoryTest.outcomes(ops), afterCutover, HistoryClient.switchRefusals.get(), errors(ops), compared,
                evidence.stream().mapToLong(ShadowEvidence::skipped).sum(), evidence.stream().mapToLong(ShadowEvidence::diverged).sum(),
                anomalies.size(), anomalies.stream().collect(Collectors.groupingBy(Anomaly::type, TreeMap::new, Collectors.counting())),
                (System.nanoTime() - started) / 1e9);
        System.out.println("ShadowHistoryTest " + summary);

        assertThat(compared).as("shadow comparisons ran: %s", summary).isPositive();
        for (ShadowEvidence e : evidence) {
            assertThat(e.diverged()).as("shadow divergences of %s: %s%nrerun: -Dhistory.shadowSeeds=%d", e.instance(), e.toBson().toJson(), seed)
                    .isZero();
        }
        assertThat(afterCutover).as("the clients were still running once the fleet was tiered: %s", summary).isPositive();
        ConcurrentHistoryTest.assertNoAnomaly("history.shadowSeeds", seed, HistoryChecker.Mode.LINEARIZABLE,
                new ConcurrentHistoryTest.Result(ops, anomalies, summary));
    }

    /** The errors clients got, by their first words. */
    private static Map<String, Long> errors(List<Op> ops) {
        return ops.stream().filter(op -> op.outcome() instanceof Outcome.Indeterminate)
                .map(op -> ((Outcome.Indeterminate) op.outcome()).error())
                .map(e -> e.length() > 200 ? e.substring(0, 200) : e)
                .collect(Collectors.groupingBy(e -> e, TreeMap::new, Collectors.counting()));
    }

    private static ModeDocument awaitPhase(ModeStore modes, Phase phase) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            ModeDocument d = modes.read();
            if (d.phase() == phase) {
                return d;
            }
            assertThat(System.nanoTime()).as("the fleet reaches %s: %s", phase, d.toBson().toJson()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /** The warmer finished: the fast tier could answer recent reads (and the proxies, following every 50 ms, know it). */
    private static void awaitWarmed(TieredFleet fleet) throws InterruptedException {
        MetadataStore store = new MetadataStore(fleet.fastWorkers);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            var state = store.namespace(TieredFleet.POLICY.namespace());
            if (state.warmer() != null && state.warmer().complete() && state.oldestCovered() != null) {
                Thread.sleep(TieredFleet.FOLLOW.toMillis() * 10);
                return;
            }
            assertThat(System.nanoTime()).as("the warmer finished: %s", state).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** Every proxy's published evidence once comparisons ran and the comparators flushed (every 0.5 s while dirty). */
    private static List<ShadowEvidence> awaitComparisons(ModeStore modes) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (modes.evidence().stream().mapToLong(ShadowEvidence::compared).sum() == 0) {
            assertThat(System.nanoTime()).as("shadow comparisons published: %s", modes.evidence()).isLessThan(deadline);
            Thread.sleep(100);
        }
        Thread.sleep(2000); // the comparisons still queued (each may wait up to 2 s for the follower) are published
        return modes.evidence();
    }
}
