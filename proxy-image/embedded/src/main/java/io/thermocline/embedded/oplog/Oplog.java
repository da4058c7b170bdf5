package io.thermocline.embedded.oplog;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The replica set's oplog: entries indexed by position, so reading from a position costs
 * O(log n + k) whatever the oplog's length. Bounded: the oldest entries fall off, and a reader
 * asking for a position before {@link #trimmedThrough()} has lost history.
 */
public final class Oplog {
    private final ConcurrentSkipListMap<OplogPosition, OplogEntry> entries = new ConcurrentSkipListMap<>();
    private final int maxEntries;
    private final ProgressSignal signal;
    private final OplogStore store;
    private volatile OplogPosition trimmedThrough = OplogPosition.ORIGIN;

    public Oplog(int maxEntries, ProgressSignal signal, OplogStore store) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("oplog size must be at least 1 entry, got " + maxEntries);
        }
        this.maxEntries = maxEntries;
        this.signal = signal;
        this.store = store;
        if (store != null) {
            store.load().forEach(e -> entries.put(e.position(), e));
            trimmedThrough = store.trimmedThrough();
        }
    }

    public void append(List<OplogEntry> batch) {
        for (OplogEntry entry : batch) {
            entries.put(entry.position(), entry);
        }
        if (store != null) {
            store.append(batch);
        }
        trim();
        signal.signalAll();
    }

    private void trim() {
        while (entries.size() > maxEntries) {
            Map.Entry<OplogPosition, OplogEntry> oldest = entries.pollFirstEntry();
            if (oldest == null) {
                break;
            }
            trimmedThrough = oldest.getKey();
            if (store != null) {
                store.remove(oldest.getKey(), trimmedThrough);
            }
        }
    }

    /** Entries strictly after a position, up to and including a limit position, at most max of them. */
    public List<OplogEntry> after(OplogPosition from, OplogPosition upTo, int max) {
        if (!upTo.isAfter(from)) {
            return List.of();
        }
        ConcurrentNavigableMap<OplogPosition, OplogEntry> range = entries.subMap(from, false, upTo, true);
        List<OplogEntry> result = new ArrayList<>(Math.min(max, 64));
        for (OplogEntry entry : range.values()) {
            if (result.size() >= max) {
                break;
            }
            result.add(entry);
        }
        return result;
    }

    public Optional<OplogEntry> next(OplogPosition after) {
        Map.Entry<OplogPosition, OplogEntry> next = entries.higherEntry(after);
        return next == null ? Optional.empty() : Optional.of(next.getValue());
    }

    public OplogPosition last() {
        Map.Entry<OplogPosition, OplogEntry> last = entries.lastEntry();
        return last == null ? trimmedThrough : last.getKey();
    }

    public Optional<OplogEntry> lastEntry() {
        Map.Entry<OplogPosition, OplogEntry> last = entries.lastEntry();
        return last == null ? Optional.empty() : Optional.of(last.getValue());
    }

    public boolean contains(OplogPosition position) {
        return entries.containsKey(position);
    }

    /** The newest position that fell off the bounded oplog (ORIGIN when nothing did). */
    public OplogPosition trimmedThrough() {
        return trimmedThrough;
    }

    /** Rollback: entries after the position never reached the new primary and are discarded. */
    public List<OplogEntry> truncateAfter(OplogPosition position) {
        ConcurrentNavigableMap<OplogPosition, OplogEntry> tail = entries.tailMap(position, false);
        List<OplogEntry> removed = new ArrayList<>(tail.values());
        for (OplogEntry entry : removed) {
            entries.remove(entry.position());
            if (store != null) {
                store.remove(entry.position(), trimmedThrough);
            }
        }
        signal.signalAll();
        return removed;
    }

    public int size() {
        return entries.size();
    }

    public void flush() {
        if (store != null) {
            store.commit();
        }
    }

    public void close() {
        if (store != null) {
            store.close();
        }
    }
}
