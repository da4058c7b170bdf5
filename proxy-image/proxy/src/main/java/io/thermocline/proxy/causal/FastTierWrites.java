package io.thermocline.proxy.causal;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonTimestamp;

/**
 * The fast tier's writes to tiered namespaces as this proxy's own change stream reports them: per
 * namespace, the cluster times of the recent writes it has seen, and the stretch of the stream it has
 * read completely. A read that must see the writes up to the fast tier's present P waits for the latest
 * write at or before P, not for one the stream read after P (under steady writes that is often a later
 * batch of the feeder's). Written by one stream reader, read by every archive-routed read
 * ({@link UnmirroredWrites} decides from a {@link Seen}).
 */
public final class FastTierWrites {

    /**
     * What the stream has shown. Every write to a tiered namespace with a cluster time in
     * [{@code from}, {@code through}] is at or before its namespace's time in {@code latest} (taken at or before a
     * bound: every such write at or before the bound); nothing is known before {@code from}.
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

    /** Write times kept per namespace; older ones are folded into {@link Recent#forgotten}. */
    static final int RECENT_PER_NAMESPACE = 1024;

    /** One namespace's recent write times. */
    private static final class Recent {
        private final TreeSet<BsonTimestamp> times = new TreeSet<>();
        /** The latest write no longer in {@link #times}: earlier than every one kept. */
        private BsonTimestamp forgotten;

        void add(BsonTimestamp time) {
            if (forgotten != null && time.compareTo(forgotten) <= 0) {
                return; // a write at or before a forgotten one: answers already cover it
            }
            times.add(time);
            if (times.size() > RECENT_PER_NAMESPACE) {
                forgotten = times.pollFirst();
            }
        }

        BsonTimestamp latest() {
            return times.isEmpty() ? forgotten : times.last();
        }

        /**
         * The latest write at or before {@code bound}; the latest forgotten one when none kept is (it may be after
         * {@code bound}: never earlier than the answer, so a read only waits longer).
         */
        BsonTimestamp latestAtOrBefore(BsonTimestamp bound) {
            BsonTimestamp kept = times.floor(bound);
            return kept != null ? kept : forgotten;
        }
    }

    private BsonTimestamp from;
    private BsonTimestamp through;
    private final Map<String, Recent> recent = new HashMap<>();
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
            recent.computeIfAbsent(namespace, ns -> new Recent()).add(time);
        }
    }

    /** Every write at or before {@code time} has been reported ({@link #wrote}). */
    public synchronized void readThrough(BsonTimestamp time) {
        if (from != null && (through == null || time.compareTo(through) > 0)) {
            through = time;
            notifyAll();
        }
    }

    /** What the stream has shown, each namespace's latest write the latest it saw. */
    public synchronized Seen seen() {
        Map<String, BsonTimestamp> latest = new HashMap<>();
        recent.forEach((namespace, writes) -> latest.put(namespace, writes.latest()));
        return new Seen(from, through, Map.copyOf(latest));
    }

    /**
     * What the stream has shown, each namespace's latest write the latest it saw at or before {@code bound} (or a
     * later one, when the writes around {@code bound} were forgotten): the writes a read that arrived before
     * {@code bound} must see.
     */
    public synchronized Seen seenAtOrBefore(BsonTimestamp bound) {
        Map<String, BsonTimestamp> latest = new HashMap<>();
        recent.forEach((namespace, writes) -> {
            BsonTimestamp write = writes.latestAtOrBefore(bound);
            if (write != null) {
                latest.put(namespace, write);
            }
        });
        return new Seen(from, through, Map.copyOf(latest));
    }

    private boolean reached(BsonTimestamp time) {
        return from != null && through != null && through.compareTo(time) >= 0;
    }

    /**
     * Waits at most {@code max} until the stream has read through {@code present}; returns what it has
     * seen then at or before {@code present} ({@link #seenAtOrBefore}; possibly not that far: the caller decides).
     */
    public Seen awaitThrough(BsonTimestamp present, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        synchronized (this) {
            if (!reached(present)) {
                waits.increment();
            }
            while (!reached(present)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                wait(Math.max(1, left / 1_000_000));
            }
            return seenAtOrBefore(present);
        }
    }

    /** How many reads found the stream behind the present and waited for it (tests wait for one before checking it has not passed). */
    public long waits() {
        return waits.sum();
    }
}
