package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Iterator;
import java.util.List;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * mongo-java-server's on-disk backend with its documents and index entries kept in {@link StableKeyOrder}.
 * The backend opens its maps by name only; opening each one here first, with the key type, makes the
 * backend's own {@code openMap(name)} return that instance (H2 hands back a map that is already open).
 */
final class OrderedH2Backend extends H2Backend {

    private static final Logger LOG = LoggerFactory.getLogger(OrderedH2Backend.class);
    /** Map names of mongo-java-server's H2 layout: a collection's documents, and its indexes. */
    private static final String DOCUMENTS = "databases.";

    private static final String INDEX = "._index_";
    /** A non-unique index's map ({@link SecondaryIndex}): keyed in its own order, not {@link StableKeyOrder}. */
    static final String SECONDARY_INDEX = "._secondary_";

    private static final String META = "meta.";

    /** The store of a database being constructed: its constructor opens maps before its own fields are set. */
    private static final ThreadLocal<MVStore> OPENING = new ThreadLocal<>();

    OrderedH2Backend(MVStore store) {
        super(withOrderedMaps(store));
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        OPENING.set(getMvStore());
        try {
            return new OrderedDatabase(databaseName, getMvStore(), getCursorRegistry());
        } finally {
            OPENING.remove();
        }
    }

    /**
     * The map naming the key order the store's maps were checked to be in, and its version. Checking walks every key
     * of every map: minutes for a store of a few GB on a slow disk, at every start. Once a store is checked (or created
     * empty) by this backend, which creates and rebuilds maps only in the stable order, later opens trust the mark.
     * A store written since by a version before the mark existed (before the stable order) would not be checked again:
     * such a downgrade is not supported.
     */
    static final String KEY_ORDER = "thermocline.keyOrder";

    /** Raised whenever {@link StableKeyOrder} changes how keys compare: every store is then checked again. */
    static final int STABLE_ORDER_VERSION = 2;

    /** Opens every existing document and index map in the stable order, rebuilding those whose entries are out of it. */
    static MVStore withOrderedMaps(MVStore store) {
        finishInterruptedRebuilds(store);
        MVMap<String, Object> keyOrder = store.openMap(KEY_ORDER);
        boolean checked = Integer.valueOf(STABLE_ORDER_VERSION).equals(keyOrder.get("version"));
        for (String name : List.copyOf(store.getMapNames())) {
            if ((name.startsWith(DOCUMENTS) || name.contains(INDEX)) && !name.endsWith(REORDERING)) {
                MVMap<Object, Object> map = open(store, name); // always: the backend's own openMap gets this instance
                if (!checked && !inOrder(map)) {
                    rebuild(store, map, name);
                }
            }
        }
        if (!checked) {
            keyOrder.put("version", STABLE_ORDER_VERSION);
            store.commit();
        }
        return store;
    }

    /** Whether the store is marked as checked in the current stable order (its next open walks no map). */
    static boolean checkedInStableOrder(MVStore store) {
        return store.hasMap(KEY_ORDER)
                && Integer.valueOf(STABLE_ORDER_VERSION)
                        .equals(store.openMap(KEY_ORDER).get("version"));
    }

    static MVMap<Object, Object> open(MVStore store, String name) {
        return store.openMap(name, new MVMap.Builder<Object, Object>().keyType(new StableKeyOrder()));
    }

    private static boolean inOrder(MVMap<Object, Object> map) {
        StableKeyOrder order = new StableKeyOrder();
        Iterator<Object> keys = map.keyIterator(null);
        Object previous = null;
        while (keys.hasNext()) {
            Object key = keys.next();
            if (previous != null && order.compare(previous, key) >= 0) {
                return false;
            }
            previous = key;
        }
        return true;
    }

    /**
     * Writes the map's entries again in the stable order (a store written before this order: its lookups could
     * miss entries). Two entries whose keys are equal were one key the old order failed to find: the later
     * one (in the old tree's order) is kept and the other is logged, since a unique index held both.
     */
    private static void rebuild(MVStore store, MVMap<Object, Object> map, String name) {
        String temporary = name + REORDERING;
        MVMap<Object, Object> copy = open(store, temporary);
        int duplicates = 0;
        Cursor<Object, Object> entries = map.cursor(null);
        while (entries.hasNext()) {
            Object key = entries.next();
            Object replaced = copy.put(key, entries.getValue());
            if (replaced != null) {
                duplicates++;
                LOG.warn("event=storage_key_collapsed map={} key={} dropped={}", name, key, replaced);
            }
        }
        store.removeMap(map);
        store.renameMap(copy, name);
        store.commit();
        LOG.warn(
                "event=storage_reordered map={} entries={} duplicates={} reason=\"keys stored out of order by an earlier version\"",
                name,
                copy.size(),
                duplicates);
    }

    /** The suffix of a map being rebuilt: it holds every entry once the original is removed, until it is renamed. */
    static final String REORDERING = ".reordering";

    /**
     * A rebuild stopped by a crash (H2 may have saved any state between its steps): while the original map exists
     * the copy is incomplete and is dropped (the rebuild runs again); once the original is gone the copy holds every
     * entry and takes its name. Never the other way round: that would lose the collection.
     */
    private static void finishInterruptedRebuilds(MVStore store) {
        for (String name : List.copyOf(store.getMapNames())) {
            if (!name.endsWith(REORDERING)) {
                continue;
            }
            String original = name.substring(0, name.length() - REORDERING.length());
            if (store.hasMap(original)) {
                store.removeMap(name);
            } else {
                store.renameMap(open(store, name), original);
                LOG.warn(
                        "event=storage_reorder_finished map={} reason=\"a rebuild was interrupted after its copy was complete\"",
                        original);
            }
        }
        store.commit();
    }

    /** A database whose new collections and indexes are created in the stable order too. */
    private static final class OrderedDatabase extends H2Database {
        private final MVStore store;

        OrderedDatabase(String name, MVStore store, CursorRegistry cursors) {
            super(name, store, cursors);
            this.store = store;
        }

        private MVStore store() {
            return store != null ? store : OPENING.get();
        }

        /** As the H2 backend's own, a collection whose documents an index walk can read by position too. */
        @Override
        protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
            String namespace = getFullCollectionNamespace(collectionName);
            @SuppressWarnings({"unchecked", "rawtypes"})
            MVMap<Object, Document> documents = (MVMap) open(store(), DOCUMENTS + namespace);
            MVMap<String, Object> meta = store().openMap(META + namespace);
            return new IndexedCollection(this, collectionName, options, documents, meta, cursorRegistry);
        }

        /**
         * {@code renameCollection}, and {@code $out} (a temporary collection renamed over its target). mongo-java-server
         * 1.47 reads the collection's name after renaming it, so its own map renames are no-ops on empty maps it opens
         * under the new name (in H2's key order), while the documents and index entries stay in maps of the old name:
         * the next open of the database fails, and after a restart the collection is empty. The maps move here.
         */
        @Override
        public void moveCollection(MongoDatabase oldDatabase, MongoCollection<?> collection, String newCollectionName) {
            String from = collection.getFullName();
            List<String> indexes = store().getMapNames().stream()
                    .filter(name -> name.startsWith(from + INDEX) || name.startsWith(from + SECONDARY_INDEX))
                    .toList();
            super.moveCollection(oldDatabase, collection, newCollectionName);
            String to = getFullCollectionNamespace(newCollectionName);
            if (from.equals(to)) {
                return;
            }
            moveMap(DOCUMENTS + from, DOCUMENTS + to, true);
            moveMap(META + from, META + to, false);
            for (String index : indexes) {
                moveMap(index, to + index.substring(from.length()), true);
            }
        }

        /** Renames a map, replacing an empty one of the new name; one holding entries is never replaced. */
        private void moveMap(String from, String to, boolean ordered) {
            MVStore s = store();
            if (!s.hasMap(from)) {
                return; // already moved
            }
            if (s.hasMap(to)) {
                MVMap<Object, Object> existing = s.openMap(to);
                if (!existing.isEmpty()) {
                    throw new IllegalStateException("cannot rename the map " + from + " to " + to
                            + ": a map of that name holds " + existing.size() + " entries");
                }
                s.removeMap(existing);
            }
            MVMap<Object, Object> map = ordered ? open(s, from) : s.openMap(from);
            s.renameMap(map, to);
        }

        @Override
        protected Index<Object> openOrCreateUniqueIndex(
                String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            open(store(), getFullCollectionNamespace(collectionName) + INDEX + indexName);
            return super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
        }

        /**
         * A non-unique index, as MongoDB builds it. Its map is built here from the collection's documents whenever it is
         * not recorded as complete: a new index, one whose map is missing (a store written before this existed, where
         * such indexes were accepted and never built), and one whose build a crash interrupted; the engine then finds
         * it filled and does not build it again.
         */
        @Override
        protected Index<Object> openOrCreateSecondaryIndex(
                String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            String namespace = getFullCollectionNamespace(collectionName);
            IndexKeyOrder order = SecondaryIndex.orderOf(keys);
            H2IndexEntries entries = H2IndexEntries.open(store(), namespace + SECONDARY_INDEX + indexName, order);
            SecondaryIndex<Object> index = new SecondaryIndex<>(indexName, keys, sparse, entries, order);
            if (!entries.built()) {
                entries.startBuild();
                Cursor<Object, Object> documents =
                        open(store(), DOCUMENTS + namespace).cursor(null);
                long entered = 0;
                while (documents.hasNext()) {
                    Object position = documents.next();
                    index.add((de.bwaldvogel.mongo.bson.Document) documents.getValue(), position, null);
                    entered++;
                }
                entries.finishBuild();
                LOG.info(
                        "event=secondary_index_built namespace={} index={} documents={} entries={} multikey={}",
                        namespace,
                        indexName,
                        entered,
                        index.getCount(),
                        index.multikey());
            }
            return index;
        }
    }

    /** H2's collection, whose documents an index walk reads by position (the document's key in its map). */
    private static final class IndexedCollection extends H2Collection implements PositionedDocuments {
        IndexedCollection(
                MongoDatabase database,
                String name,
                CollectionOptions options,
                MVMap<Object, Document> documents,
                MVMap<String, Object> meta,
                CursorRegistry cursors) {
            super(database, name, options, documents, meta, cursors);
        }

        @Override
        public Document documentAt(Object position) {
            return getDocument(position);
        }
    }
}
