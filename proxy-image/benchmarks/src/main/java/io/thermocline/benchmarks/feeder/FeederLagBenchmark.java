package io.thermocline.benchmarks.feeder;

import com.mongodb.client.ClientSession;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.bson.BsonTimestamp;

/**
 * Write-to-mirrored latency at a steady write load: writer threads update random documents on the
 * fast tier at a fixed total rate, each remembering its write's {@code operationTime} and when it
 * was acknowledged; a watcher polls the feeder's persisted checkpoint every 0.2 ms and records, per
 * write, the time from acknowledgement until mirrored-through covered it. That is what an
 * archive-routed read behind the read barrier waits for (plus the barrier's own probe and polling).
 * Prints a table; not a test. Run: see docs/benchmarks/feeder-lag.md.
 */
public final class FeederLagBenchmark {

    private record Write(BsonTimestamp operationTime, long acknowledgedNanos) {
    }

    private FeederLagBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        int writers = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        List<Integer> rates = new ArrayList<>();
        for (String r : (args.length > 1 ? args[1] : "100,400").split(",")) {
            rates.add(Integer.parseInt(r));
        }
        FeederConfig config = FeederConfig.defaults();
        System.out.printf("%d s per rate, %d writer threads, 10,000 documents, feeder batch %d / maxBatchWait %d ms, coalesce %s%n",
                seconds, writers, config.batchSize(), config.maxBatchWait().toMillis(), config.coalesce());
        System.out.println("| target writes/s | achieved writes/s | writes measured | write-to-mirrored p50 ms | p90 ms | p99 ms | max ms |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (int rate : rates) {
            run(config, rate, seconds, writers);
        }
    }

    static void run(FeederConfig config, int rate, int seconds, int writers) throws Exception {
        int documents = 10_000;
        try (BenchTiers tiers = new BenchTiers(); Feeder feeder = tiers.feederWithSeed(config, new PrometheusRegistry(), documents)) {
            var orders = tiers.orders;
            var barrier = tiers.barrier;
            var user = tiers.user;

            Histogram lags = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            List<ConcurrentLinkedQueue<Write>> pending = new ArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong written = new AtomicLong();
            long intervalNanos = TimeUnit.SECONDS.toNanos(1) * writers / rate;
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                ConcurrentLinkedQueue<Write> queue = new ConcurrentLinkedQueue<>();
                pending.add(queue);
                long offset = intervalNanos * w / writers;
                Thread t = new Thread(() -> {
                    try (ClientSession session = user.startSession()) {
                        long next = start + offset;
                        while (next < end) {
                            LockSupport.parkNanos(next - System.nanoTime());
                            orders.updateOne(session, Filters.eq("_id", ThreadLocalRandom.current().nextInt(documents)), Updates.inc("n", 1));
                            queue.add(new Write(session.getOperationTime(), System.nanoTime()));
                            written.incrementAndGet();
                            next += intervalNanos; // a fixed schedule: a slow write does not lower the offered load
                        }
                    }
                });
                t.start();
                threads.add(t);
            }
            Thread watcher = new Thread(() -> {
                while (!stop.get() || pending.stream().anyMatch(q -> !q.isEmpty())) {
                    FeederCheckpoint checkpoint = feeder.lastCheckpoint();
                    long now = System.nanoTime();
                    for (ConcurrentLinkedQueue<Write> queue : pending) {
                        Write head;
                        while ((head = queue.peek()) != null && checkpoint != null && checkpoint.covers(head.operationTime())) {
                            queue.poll();
                            lags.recordValue(Math.max(0, (now - head.acknowledgedNanos()) / 1000));
                        }
                    }
                    LockSupport.parkNanos(200_000);
                }
            });
            watcher.start();
            for (Thread t : threads) {
                t.join();
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            barrier.sync(Duration.ofSeconds(120));
            stop.set(true);
            watcher.join(TimeUnit.SECONDS.toMillis(30));
            System.out.printf("| %d | %.0f | %d | %.1f | %.1f | %.1f | %.1f |%n", rate, written.get() / elapsed, lags.getTotalCount(),
                    lags.getValueAtPercentile(50) / 1000.0, lags.getValueAtPercentile(90) / 1000.0,
                    lags.getValueAtPercentile(99) / 1000.0, lags.getMaxValue() / 1000.0);
            tiers.verify();
        }
    }
}
