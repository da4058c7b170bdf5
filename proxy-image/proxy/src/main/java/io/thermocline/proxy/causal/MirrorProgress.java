package io.thermocline.proxy.causal;

import io.thermocline.tiering.state.MirroredThrough;
import java.time.Duration;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;

/**
 * How far the feeder has mirrored, as this proxy knows it: pushed by the state follower and by this
 * proxy's stream of fast-tier writes (which shows each checkpoint as it commits; a waiting read wakes at
 * once) and, while a read waits for a causal point, re-read from the shared state every few milliseconds
 * (one read at a time, shared by every waiter) in case that stream is down.
 */
public final class MirrorProgress {

    private static final long POLL_NANOS = Duration.ofMillis(10).toNanos();

    private final Supplier<BsonTimestamp> persisted;
    private volatile MirroredThrough known = MirroredThrough.NOTHING;
    private long lastReadNanos;
    /** Waiting reads sleep on it; every advance wakes them. */
    private final Object advanced = new Object();

    /** {@code persisted} reads the feeder's checkpointed mirrored-through from the metadata store. */
    public MirrorProgress(Supplier<BsonTimestamp> persisted) {
        this.persisted = persisted;
    }

    public MirroredThrough known() {
        return known;
    }

    public void observed(MirroredThrough reported) {
        boolean moved;
        synchronized (this) {
            MirroredThrough before = known;
            known = known.atLeast(reported);
            moved = known != before;
        }
        if (moved) {
            synchronized (advanced) {
                advanced.notifyAll();
            }
        }
    }

    /**
     * Waits until every fast-tier write up to {@code causalPoint} is in the archive.
     *
     * @return false when {@code timeout} passed first
     */
    public boolean await(BsonTimestamp causalPoint, Duration timeout) throws InterruptedException {
        if (known.covers(causalPoint)) {
            return true;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            refresh();
            if (known.covers(causalPoint)) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            synchronized (advanced) {
                if (!known.covers(causalPoint)) {
                    advanced.wait(5);
                }
            }
        }
    }

    private void refresh() {
        synchronized (this) {
            long now = System.nanoTime();
            if (now - lastReadNanos < POLL_NANOS) {
                return;
            }
            lastReadNanos = now;
        }
        BsonTimestamp read = persisted.get();
        if (read != null) {
            observed(new MirroredThrough(read));
        }
    }
}
