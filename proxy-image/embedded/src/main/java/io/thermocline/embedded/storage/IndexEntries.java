package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.backend.KeyValue;
import java.util.Iterator;
import java.util.Map;

/** Where a {@link SecondaryIndex} keeps its entries, in {@link IndexKeyOrder}: a tree in memory, or an H2 map. */
interface IndexEntries<P> {

    void put(KeyValue key, P position);

    /** The position the entry pointed at, or null when there was none. */
    P remove(KeyValue key);

    P get(KeyValue key);

    long size();

    /**
     * The entries from {@code from} to {@code to} (either null: the end), forwards in the index's order or backwards,
     * read from the entries as they are when the walk starts.
     */
    Iterator<Map.Entry<KeyValue, P>> walk(KeyValue from, KeyValue to, boolean backwards);

    /** Whether a document ever held an array in an indexed field (then a walk in key order is no sort; see the plan). */
    boolean multikey();

    void markMultikey();

    /** Removes every entry, for good (the index is dropped). */
    void drop();
}
