package io.thermocline.proxy.causal;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonTimestamp;

/**
 * The fast tier's writes to tiered namespaces as this proxy's own change stream reports them: per
 * namespace, the cluster time of the latest write it has seen, and the stretch of the stream it has
 * read completely. Written by one stream reader, read by every archive-routed read
 * ({@link UnmirroredWrites} decides from a {@link Seen}).
 */
public final class FastTierWrites {

    /**
     * What the stream has shown. Every write to a tiered namespace with a cluster time in
     * [{@code from}, {@code through}] is in {@code latest}; nothing is known before {@code from}.
     * {@code through} is null before the stream read anything.
     */
    public record Seen(BsonTimestamp from, BsonTimestamp through, Map<String, BsonTimestamp> latest) {

        /** The latest write seen to {@code namespace} ("db.coll"), null when none. */
        public BsonTimestamp latest(String namespace) {
            return latest.get(namespace);
        }

        /** Whether every write at or before {@code time} since {@link #from} has been seen. */
        public boolean reached(BsonTimestamp time) {
            return from != null && through != null && through.compareTo(time) >= 0;
        }
    }

    private BsonTimestamp from;
    private BsonTimestamp through;
    private final Map<String, BsonTimestamp> latest = new HashMap<>();
    private final LongAdder waits = new LongAdder();

    /**
     * A stream opened at {@code start} (its first event may be at {@code start}) that does not continue
     * the previous one: what lay between the two is unknown. The latest writes seen before stay: they
     * are real writes, and a read only ever waits longer for them.
     */
    public synchronized void openedAt(BsonTimestamp start) {
        from = start;
        through = null;
        notifyAll();
    }

    /** A write at {@code time} to each of {@code namespaces}. */
    public synchronized void wrote(Collection<String> namespaces, BsonTimestamp time) {
        for (String namespace : namespaces) {
            latest.merge(namespace, time, (a, b) -> a.compareTo(b) >= 0 ? a : b);
        }
    }

    /** Every write at or before {@code time} has been reported ({@link #wrote}). */
    public synchronized void readThrough(BsonTimestamp time) {
        if (from != null && (through == null || time.compareTo(through) > 0)) {
            through = time;
            notifyAll();
        }
    }

    public synchronized Seen seen() {
        return new Seen(from, through, Map.copyOf(latest));
    }

    /**
     * Waits at most {@code max} until the stream has read through {@code present}; returns what it has
     * seen then (possibly not that far: the caller decides).
     */
    public Seen awaitThrough(BsonTimestamp present, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        synchronized (this) {
            if (!seen().reached(present)) {
                waits.increment();
            }
            while (!seen().reached(present)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                wait(Math.max(1, left / 1_000_000));
            }
            return seen();
        }
    }

    /** How many reads found the stream behind the present and waited for it (tests wait for one before checking it has not passed). */
    public long waits() {
        return waits.sum();
    }
}
