package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.KeyValue;
import java.util.AbstractMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * A secondary index's entries in the on-disk engine: an H2 map of its own, keyed in {@link IndexKeyOrder}. Whether the
 * map is complete, and whether it is multikey, is recorded in {@link #STATES} under the map's id (stable across a
 * rename, never reused): a build a crash interrupted left entries without the record, and is built again at open.
 */
final class H2IndexEntries implements IndexEntries<Object> {

    /** The map recording, per index map id, {@link #BUILT} or {@link #MULTIKEY}; no record: not (completely) built. */
    static final String STATES = "thermocline.secondaryIndexes";

    private static final String BUILT = "built";
    private static final String MULTIKEY = "multikey";

    private final MVStore store;
    private final MVMap<KeyValue, Object> entries;
    private final MVMap<Integer, String> states;
    /** Set between {@link #startBuild} and {@link #finishBuild}: the state is recorded only once the build is complete. */
    private boolean building;

    private boolean multikeyWhileBuilding;

    private H2IndexEntries(MVStore store, MVMap<KeyValue, Object> entries) {
        this.store = store;
        this.entries = entries;
        this.states = store.openMap(STATES);
    }

    static H2IndexEntries open(MVStore store, String mapName, IndexKeyOrder order) {
        return new H2IndexEntries(store, store.openMap(mapName, new MVMap.Builder<KeyValue, Object>().keyType(order)));
    }

    /** Whether every document was entered (the build finished), so the map can be trusted as it is. */
    boolean built() {
        return states.get(entries.getId()) != null;
    }

    /** Forgets any earlier, unfinished build: the caller enters every document, then calls {@link #finishBuild}. */
    void startBuild() {
        states.remove(entries.getId());
        entries.clear();
        building = true;
        multikeyWhileBuilding = false;
    }

    void finishBuild() {
        building = false;
        states.put(entries.getId(), multikeyWhileBuilding ? MULTIKEY : BUILT);
    }

    @Override
    public void put(KeyValue key, Object position) {
        entries.put(key, position);
    }

    @Override
    public Object remove(KeyValue key) {
        return entries.remove(key);
    }

    @Override
    public Object get(KeyValue key) {
        return entries.get(key);
    }

    @Override
    public long size() {
        return entries.sizeAsLong();
    }

    @Override
    public Iterator<Map.Entry<KeyValue, Object>> walk(KeyValue from, KeyValue to, boolean backwards) {
        Cursor<KeyValue, Object> cursor = entries.cursor(from, to, backwards);
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return cursor.hasNext();
            }

            @Override
            public Map.Entry<KeyValue, Object> next() {
                if (!cursor.hasNext()) {
                    throw new NoSuchElementException();
                }
                KeyValue key = cursor.next();
                return new AbstractMap.SimpleImmutableEntry<>(key, cursor.getValue());
            }
        };
    }

    @Override
    public boolean multikey() {
        return MULTIKEY.equals(states.get(entries.getId()));
    }

    @Override
    public void markMultikey() {
        if (building) {
            multikeyWhileBuilding = true;
        } else if (!multikey()) {
            states.put(entries.getId(), MULTIKEY);
        }
    }

    @Override
    public void drop() {
        states.remove(entries.getId());
        store.removeMap(entries);
    }
}
