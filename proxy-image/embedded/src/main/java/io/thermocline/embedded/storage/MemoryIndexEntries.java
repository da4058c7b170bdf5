package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.KeyValue;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A secondary index's entries in the in-memory engine. Readers share the tree and a writer has it alone: the store's
 * collection locks ({@link StoreLocks}) hold around every use, as around the engine's own structures.
 */
final class MemoryIndexEntries implements IndexEntries<Integer> {
    private final TreeMap<KeyValue, Integer> entries;
    private volatile boolean multikey;

    MemoryIndexEntries(IndexKeyOrder order) {
        this.entries = new TreeMap<>(order);
    }

    @Override
    public void put(KeyValue key, Integer position) {
        entries.put(key, position);
    }

    @Override
    public Integer remove(KeyValue key) {
        return entries.remove(key);
    }

    @Override
    public Integer get(KeyValue key) {
        return entries.get(key);
    }

    @Override
    public long size() {
        return entries.size();
    }

    @Override
    public Iterator<Map.Entry<KeyValue, Integer>> walk(KeyValue from, KeyValue to, boolean backwards) {
        NavigableMap<KeyValue, Integer> range = backwards ? entries.descendingMap() : entries;
        if (from != null) {
            range = range.tailMap(from, true);
        }
        if (to != null) {
            range = range.headMap(to, true);
        }
        return range.entrySet().iterator();
    }

    @Override
    public boolean multikey() {
        return multikey;
    }

    @Override
    public void markMultikey() {
        multikey = true;
    }

    @Override
    public void drop() {
        entries.clear();
    }
}
