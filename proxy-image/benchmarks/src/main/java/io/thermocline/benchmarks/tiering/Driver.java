package io.thermocline.benchmarks.tiering;

import io.thermocline.benchmarks.ycsb.MongoDbBinding;
import org.HdrHistogram.Histogram;
import site.ycsb.DB;

import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Runs a YCSB workload with N client threads for a warm-up and a measured interval, optionally at
 * a target rate (YCSB's {@code target}: each thread paced to target / threads ops/s from a random
 * phase, latency
 * measured from each operation's actual start, as YCSB does), and records operations completed in
 * every second of the whole run (warm-up included) for the time series.
 */
final class Driver {

    /** What one measured interval saw. Histograms in microseconds. */
    record Result(long operations, long failed, long notFound, double seconds, Histogram read, Histogram update, Histogram insert,
                  long[] timeline, long nextInsertKey, String lastFailure, ArchiveCgroup.Reads archiveReads) {
        double opsPerSecond() {
            return operations / seconds;
        }

        double archiveReadsPerSecond() {
            return archiveReads.requests() / seconds;
        }

        static double ms(Histogram h, double percentile) {
            return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1000.0;
        }
    }

    private Driver() {
    }

    static Result run(Properties p, int threads, int warmupSeconds, int seconds, int target, Supplier<ArchiveCgroup.Reads> archiveReads)
            throws Exception {
        DatedWorkload w = new DatedWorkload();
        w.init(p);
        TimedDb.Meter meter = new TimedDb.Meter();
        int total = warmupSeconds + seconds;
        AtomicLongArray perSecond = new AtomicLongArray(total + 5);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch done = new CountDownLatch(threads);
        long[] t0 = new long[1];
        CountDownLatch go = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    DB db = new TimedDb(new MongoDbBinding(), meter);
                    db.setProperties(p);
                    db.init();
                    Object state = w.initThread(p, id, threads);
                    ready.countDown();
                    go.await();
                    long interval = target > 0 ? (long) (1e9 * threads / target) : 0;
                    // each thread starts at a random phase of its interval, as YCSB's client threads do: started
                    // together, 64 threads paced alike would send their operations in bursts of 64
                    long next = System.nanoTime() + (interval > 0 ? java.util.concurrent.ThreadLocalRandom.current().nextLong(interval) : 0)
                            - interval;
                    while (!stop.get()) {
                        if (interval > 0) {
                            next += interval;
                            long wait = next - System.nanoTime();
                            if (wait > 0) {
                                LockSupport.parkNanos(wait);
                            }
                        }
                        w.doTransaction(db, state);
                        int second = (int) ((System.nanoTime() - t0[0]) / 1_000_000_000L);
                        if (second < perSecond.length()) {
                            perSecond.incrementAndGet(second);
                        }
                        if (meter.measuring) {
                            ops.incrementAndGet();
                        }
                    }
                } catch (Exception e) {
                    meter.lastFailure = e.toString();
                    meter.failed.incrementAndGet();
                    ready.countDown();
                } finally {
                    done.countDown();
                }
            }, "ycsb-" + t);
            th.setDaemon(true);
            th.start();
        }
        ready.await();
        t0[0] = System.nanoTime();
        go.countDown();
        Thread.sleep(warmupSeconds * 1000L);
        meter.reset();
        ops.set(0);
        meter.measuring = true;
        ArchiveCgroup.Reads readsBefore = archiveReads.get();
        long m0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        meter.measuring = false;
        double elapsed = (System.nanoTime() - m0) / 1e9;
        ArchiveCgroup.Reads reads = archiveReads.get().minus(readsBefore);
        long measured = ops.get();
        Histogram read = meter.read.getIntervalHistogram();
        Histogram update = meter.update.getIntervalHistogram();
        Histogram insert = meter.insert.getIntervalHistogram();
        stop.set(true);
        done.await();
        long[] series = new long[total];
        for (int i = 0; i < total; i++) {
            series[i] = perSecond.get(i);
        }
        return new Result(measured, meter.failed.get(), meter.notFound.get(), elapsed, read, update, insert, series, w.nextInsertKey(), meter.lastFailure, reads);
    }
}
