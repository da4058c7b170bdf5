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
import java.util.Date;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * Write-to-mirrored latency at a steady write load: writer threads update random documents on the
 * fast tier at a fixed total rate, each remembering its write's {@code operationTime} and when it
 * was acknowledged; a watcher polls the feeder's persisted checkpoint every 0.2 ms and records, per
 * write, the time from acknowledgement until mirrored-through covered it. That is what an
 * archive-routed read behind the read barrier waits for (plus the barrier's own probe and polling).
 *
 * <p>Workloads: {@code update} ({@code $inc} of a random document), and {@code updateDelete}: an update, the delete
 * of the same document at once and its re-insert, back to back, so the feeder's {@code updateLookup} often finds
 * nothing (a missing image) and mirrored-through is held until a probe written after the lookup is mirrored (issue
 * 37's fix): the lag that fix costs where it acts. Prints a table; not a test. Run: see docs/benchmarks/feeder-lag.md.
 */
public final class FeederLagBenchmark {

    private record Write(BsonTimestamp operationTime, long acknowledgedNanos) {}

    private FeederLagBenchmark() {}

    /** What each scheduled slot of a writer does. */
    enum Workload {
        UPDATE,
        UPDATE_DELETE;

        static Workload parse(String name) {
            return switch (name) {
                case "update" -> UPDATE;
                case "updateDelete" -> UPDATE_DELETE;
                default -> throw new IllegalArgumentException("workload " + name + ": update or updateDelete");
            };
        }

        /** Writes per slot: the rate is in writes, so a slot of three comes a third as often. */
        int writesPerSlot() {
            return this == UPDATE ? 1 : 3;
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        int writers = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        List<Integer> rates = new ArrayList<>();
        for (String r : (args.length > 1 ? args[1] : "100,400").split(",")) {
            rates.add(Integer.parseInt(r));
        }
        List<Workload> workloads = new ArrayList<>();
        for (String w : (args.length > 3 ? args[3] : "update").split(",")) {
            workloads.add(Workload.parse(w));
        }
        FeederConfig config = FeederConfig.defaults();
        System.out.printf(
                "%d s per rate, %d writer threads, 10,000 documents, feeder batch %d / maxBatchWait %d ms, coalesce %s%n",
                seconds, writers, config.batchSize(), config.maxBatchWait().toMillis(), config.coalesce());
        System.out.println(
                "| workload | target writes/s | achieved writes/s | writes measured | write-to-mirrored p50 ms | p90 ms | p99 ms | max ms | missing images |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (int rate : rates) {
            for (Workload workload : workloads) { // interleaved per rate: both see the same machine state
                run(config, rate, seconds, writers, workload);
            }
        }
    }

    static void run(FeederConfig config, int rate, int seconds, int writers, Workload workload) throws Exception {
        int documents = 10_000;
        PrometheusRegistry registry = new PrometheusRegistry();
        try (BenchTiers tiers = new BenchTiers();
                Feeder feeder = tiers.feederWithSeed(config, registry, documents)) {
            var orders = tiers.orders;
            var barrier = tiers.barrier;
            var user = tiers.user;

            Histogram lags = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
            List<ConcurrentLinkedQueue<Write>> pending = new ArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong written = new AtomicLong();
            long intervalNanos = TimeUnit.SECONDS.toNanos(1) * writers * workload.writesPerSlot() / rate;
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
                            int id = ThreadLocalRandom.current().nextInt(documents);
                            orders.updateOne(session, Filters.eq("_id", id), Updates.inc("n", 1));
                            queue.add(new Write(session.getOperationTime(), System.nanoTime()));
                            written.incrementAndGet();
                            if (workload == Workload.UPDATE_DELETE
                                    && orders.deleteOne(session, Filters.eq("_id", id))
                                                    .getDeletedCount()
                                            == 1) {
                                queue.add(new Write(session.getOperationTime(), System.nanoTime()));
                                orders.insertOne(
                                        session,
                                        new Document("_id", id)
                                                .append("createdAt", new Date())
                                                .append("n", 0));
                                queue.add(new Write(session.getOperationTime(), System.nanoTime()));
                                written.addAndGet(2);
                            }
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
                        while ((head = queue.peek()) != null
                                && checkpoint != null
                                && checkpoint.covers(head.operationTime())) {
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
            System.out.printf(
                    "| %s | %d | %.0f | %d | %.1f | %.1f | %.1f | %.1f | %.0f |%n",
                    workload == Workload.UPDATE ? "update" : "updateDelete",
                    rate,
                    written.get() / elapsed,
                    lags.getTotalCount(),
                    lags.getValueAtPercentile(50) / 1000.0,
                    lags.getValueAtPercentile(90) / 1000.0,
                    lags.getValueAtPercentile(99) / 1000.0,
                    lags.getMaxValue() / 1000.0,
                    FeederBenchmark.counter(registry, "thermocline_feeder_events", "missing_image"));
            tiers.verify();
        }
    }
}
