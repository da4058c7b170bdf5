package io.thermocline.benchmarks.tiering;

import org.HdrHistogram.Recorder;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A YCSB DB that times each operation of the DB it wraps, per kind (read, update, insert), and
 * counts the operations that failed: an exception (a driver error, a refusal by the proxy), which it
 * turns into {@link Status#ERROR} so the run goes on, or another status than OK; apart from those, the
 * ones that found no document ({@link Status#NOT_FOUND}: a key an earlier run's lost insert left out).
 */
final class TimedDb extends DB {

    /** Latencies in microseconds and failures, shared by every thread of one run. */
    static final class Meter {
        final Recorder read = new Recorder(3);
        final Recorder update = new Recorder(3);
        final Recorder insert = new Recorder(3);
        final AtomicLong failed = new AtomicLong();
        final AtomicLong notFound = new AtomicLong();
        volatile boolean measuring;
        volatile String lastFailure = "";

        void reset() {
            read.reset();
            update.reset();
            insert.reset();
            failed.set(0);
            notFound.set(0);
        }
    }

    private final DB inner;
    private final Meter meter;

    TimedDb(DB inner, Meter meter) {
        this.inner = inner;
        this.meter = meter;
    }

    @Override
    public void init() throws DBException {
        inner.setProperties(getProperties());
        inner.init();
    }

    @Override
    public void cleanup() throws DBException {
        inner.cleanup();
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        return timed(meter.read, () -> inner.read(table, key, fields, result));
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        return timed(meter.update, () -> inner.update(table, key, values));
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        return timed(meter.insert, () -> inner.insert(table, key, values));
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        throw new UnsupportedOperationException("the tiering mixes do not scan");
    }

    @Override
    public Status delete(String table, String key) {
        throw new UnsupportedOperationException("the tiering mixes do not delete");
    }

    private Status timed(Recorder recorder, Supplier<Status> op) {
        long start = System.nanoTime();
        Status status;
        try {
            status = op.get();
        } catch (RuntimeException e) {
            meter.lastFailure = e.toString();
            status = Status.ERROR;
        }
        if (meter.measuring) {
            recorder.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
            if (status == Status.NOT_FOUND) {
                meter.notFound.incrementAndGet();
            } else if (!status.isOk()) {
                meter.failed.incrementAndGet();
            }
        }
        return status;
    }
}
