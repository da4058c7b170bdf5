package io.thermocline.benchmarks.secondaries;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/** Reader threads calling one read as fast as they can: a warm-up, then a measured window with snapshots at its two ends. */
final class ReadLoad {

    /** What the window saw: latencies in microseconds, its length, the reads that failed in it. */
    record Result(Histogram latency, double seconds, long errors) {
        double opsPerSecond() {
            return latency.getTotalCount() / seconds;
        }
    }

    @FunctionalInterface
    interface Snapshot {
        void take() throws Exception;
    }

    private ReadLoad() {
    }

    static Result run(int threads, int warmupSeconds, int seconds, Runnable read, Snapshot windowOpens, Snapshot windowCloses)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicLong errors = new AtomicLong();
        Recorder recorder = new Recorder(3);
        List<Thread> running = new ArrayList<>();
        for (int r = 0; r < threads; r++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    long start = System.nanoTime();
                    try {
                        read.run();
                        if (measuring.get()) {
                            recorder.recordValue((System.nanoTime() - start) / 1000);
                        }
                    } catch (RuntimeException e) {
                        if (measuring.get()) {
                            errors.incrementAndGet();
                        }
                    }
                }
            });
            t.setDaemon(true);
            t.start();
            running.add(t);
        }
        try {
            Thread.sleep(warmupSeconds * 1000L);
            windowOpens.take();
            recorder.reset();
            measuring.set(true);
            long start = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            measuring.set(false);
            double elapsed = (System.nanoTime() - start) / 1e9;
            windowCloses.take();
            return new Result(recorder.getIntervalHistogram(), elapsed, errors.get());
        } finally {
            stop.set(true);
            for (Thread t : running) {
                t.join(10_000);
            }
        }
    }
}
