package io.thermocline.benchmarks.feeder;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.feeder.Feeder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonTimestamp;

/**
 * Feeder throughput and lag under a sustained update load, with and without coalescing. Writers
 * update random documents of a hot set on the fast tier as fast as they can; a sampler measures
 * lag as the time from a probe write to the feeder's checkpoint covering it. Prints a table; not a test.
 *
 * <p>Run: see docs/benchmarks/feeder.md.
 */
public final class FeederBenchmark {

    static final CollectionPolicy POLICY = new CollectionPolicy("bench", "orders", "createdAt", Duration.ofDays(1));

    private FeederBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int hotDocuments = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        int writers = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        System.out.printf("%d s of updates over %d hot documents, %d writer threads, feeder batch 1000 / 100 ms%n",
                seconds, hotDocuments, writers);
        System.out.println("| coalesce | user writes/s | change events handled/s | archive writes/s | writes saved by coalescing | lag p50 ms | lag p99 ms | lag max ms | drain ms |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (boolean coalesce : new boolean[] {false, true}) {
            run(coalesce, seconds, hotDocuments, writers);
        }
    }

    static void run(boolean coalesce, int seconds, int hotDocuments, int writers) throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        try (BenchTiers tiers = new BenchTiers();
             Feeder feeder = tiers.feederWithSeed(new FeederConfig(1000, Duration.ofMillis(100), coalesce), registry, hotDocuments)) {
            var orders = tiers.orders;
            var barrier = tiers.barrier;
            double archiveBefore = counter(registry, "thermocline_feeder_archive_writes");
            double eventsBefore = counter(registry, "thermocline_feeder_events", "mirrored") + counter(registry, "thermocline_feeder_events", "coalesced");
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong written = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        orders.updateOne(Filters.eq("_id", ThreadLocalRandom.current().nextInt(hotDocuments)), Updates.inc("n", 1));
                        written.incrementAndGet();
                    }
                });
                t.start();
                threads.add(t);
            }
            List<Long> lags = Collections.synchronizedList(new ArrayList<>());
            long start = System.nanoTime();
            long end = start + Duration.ofSeconds(seconds).toNanos();
            while (System.nanoTime() < end) {
                long probeStart = System.nanoTime();
                BsonTimestamp probe = barrier.probe();
                if (barrier.awaitMirrored(probe, Duration.ofSeconds(120)).isPresent()) {
                    lags.add((System.nanoTime() - probeStart) / 1_000_000);
                }
                Thread.sleep(100);
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            long writeEnd = System.nanoTime();
            barrier.sync(Duration.ofSeconds(300));
            long drained = System.nanoTime();
            double elapsed = (writeEnd - start) / 1e9;
            double coalesced = counter(registry, "thermocline_feeder_events", "coalesced");
            double events = counter(registry, "thermocline_feeder_events", "mirrored") + coalesced - eventsBefore;
            double archiveWrites = counter(registry, "thermocline_feeder_archive_writes") - archiveBefore;
            Collections.sort(lags);
            double total = (drained - start) / 1e9;
            System.out.printf("| %s | %.0f | %.0f | %.0f | %.0f %% | %d | %d | %d | %d |%n", coalesce,
                    written.get() / elapsed, events / total, archiveWrites / total, events == 0 ? 0 : 100 * coalesced / events,
                    percentile(lags, 50), percentile(lags, 99), lags.isEmpty() ? -1 : lags.get(lags.size() - 1),
                    (drained - writeEnd) / 1_000_000);
            tiers.verify();
        }
    }

    static double counter(PrometheusRegistry registry, String name, String... outcome) {
        return registry.scrape().stream().filter(s -> s.getMetadata().getPrometheusName().equals(name))
                .flatMap(s -> ((CounterSnapshot) s).getDataPoints().stream())
                .filter(p -> outcome.length == 0 || outcome[0].equals(p.getLabels().get("outcome")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue).sum();
    }

    static long percentile(List<Long> sorted, int p) {
        if (sorted.isEmpty()) {
            return -1;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }
}
