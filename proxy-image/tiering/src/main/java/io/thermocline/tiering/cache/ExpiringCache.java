package io.thermocline.tiering.cache;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.function.LongSupplier;

/**
 * A map of what a process remembers for a while (cursor bases, causal points, pins, own
 * transactions): at most {@code capacity} entries, the least recently used forgotten first, and
 * an entry not used for {@code expireAfterAccess} forgotten too. Strict LRU on purpose: a cache
 * that admits by frequency could drop a just-opened cursor or a new transaction's pin while
 * keeping old ones. Thread-safe (one lock); expired entries are dropped on each call.
 */
public final class ExpiringCache<K, V> {

    private record Entry<V>(V value, long usedAtNanos) {}

    private final long expireAfterNanos;
    private final LongSupplier nanoTime;
    private final LinkedHashMap<K, Entry<V>> entries;

    /** {@code expireAfterAccess} zero: entries leave only by capacity. */
    public ExpiringCache(int capacity, Duration expireAfterAccess) {
        this(capacity, expireAfterAccess, System::nanoTime);
    }

    /** {@code nanoTime}: the clock expiry is measured on (tests pass their own). */
    public ExpiringCache(int capacity, Duration expireAfterAccess, LongSupplier nanoTime) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("a cache needs a capacity of at least 1, got " + capacity);
        }
        if (expireAfterAccess.isNegative()) {
            throw new IllegalArgumentException(
                    "expireAfterAccess must be zero (never) or positive, got " + expireAfterAccess);
        }
        this.expireAfterNanos = expireAfterAccess.isZero() ? Long.MAX_VALUE : expireAfterAccess.toNanos();
        this.nanoTime = nanoTime;
        this.entries = new LinkedHashMap<>(Math.min(capacity, 1024), 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, ExpiringCache.Entry<V>> eldest) {
                return size() > capacity;
            }
        };
    }

    /** The value, now counted as used; null when absent or expired. */
    public synchronized V get(K key) {
        long now = dropExpired();
        Entry<V> entry = entries.get(key);
        if (entry == null) {
            return null;
        }
        entries.put(key, new Entry<>(entry.value(), now));
        return entry.value();
    }

    /** Whether a live entry exists, without counting it as used. */
    public synchronized boolean contains(K key) {
        dropExpired();
        return entries.containsKey(key);
    }

    public synchronized void put(K key, V value) {
        entries.put(key, new Entry<>(value, dropExpired()));
    }

    /** Stores {@code value}, or {@code combine(old, value)} over a live entry; returns what is stored. */
    public synchronized V merge(K key, V value, BinaryOperator<V> combine) {
        long now = dropExpired();
        Entry<V> old = entries.get(key);
        V stored = old == null ? value : combine.apply(old.value(), value);
        entries.put(key, new Entry<>(stored, now));
        return stored;
    }

    /** The value removed, or null. */
    public synchronized V remove(K key) {
        dropExpired();
        Entry<V> removed = entries.remove(key);
        return removed == null ? null : removed.value();
    }

    /** Live entries. */
    public synchronized int size() {
        dropExpired();
        return entries.size();
    }

    /** Drops expired entries from the least recently used end (the map's order); returns now. */
    private long dropExpired() {
        long now = nanoTime.getAsLong();
        Iterator<Entry<V>> oldestFirst = entries.values().iterator();
        while (oldestFirst.hasNext() && now - oldestFirst.next().usedAtNanos() >= expireAfterNanos) {
            oldestFirst.remove();
        }
        return now;
    }
}
