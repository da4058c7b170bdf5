package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.CannotIndexParallelArraysError;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * An ordered, non-unique index, which mongo-java-server 1.47 accepts and never builds: one entry per document,
 * {@code (key values..., _id)} pointing at the document's position, in {@link IndexKeyOrder}. A document with an array
 * in an indexed field has an entry per element, as MongoDB's multikey indexes do (an empty array: one entry holding
 * it); two indexed fields holding arrays are refused, as MongoDB refuses them. A missing field is entered as missing
 * and sorts with null, as the engine's sort does. The engine keeps it through the same calls as its unique indexes on
 * every insert, update and delete, on a primary and on secondaries alike; a sparse index holds every document too
 * (what it omits is only a plan's concern, and the plan reads every document's entry).
 */
final class SecondaryIndex<P> extends Index<P> {

    private final IndexEntries<P> entries;
    private final IndexKeyOrder order;

    SecondaryIndex(String name, List<IndexKey> keys, boolean sparse, IndexEntries<P> entries, IndexKeyOrder order) {
        super(name, keys, sparse);
        this.entries = entries;
        this.order = order;
    }

    static IndexKeyOrder orderOf(List<IndexKey> keys) {
        return new IndexKeyOrder(keys.stream().map(IndexKey::isAscending).toList());
    }

    /** The index's entries for a document (copies of its values: the engine changes stored documents in place). */
    NavigableSet<KeyValue> entriesOf(Document document) {
        List<String> paths = keys();
        List<List<Object>> choices = new ArrayList<>();
        List<String> arrays = new ArrayList<>();
        for (String path : paths) {
            Object value = Utils.getSubdocumentValueCollectionAware(document, path);
            if (value instanceof Collection<?> elements && !elements.isEmpty()) {
                arrays.add(path);
                List<Object> each = new ArrayList<>();
                elements.forEach(e -> each.add(StableKeyOrder.canonical(e)));
                choices.add(each);
            } else {
                if (value instanceof Collection<?>) {
                    arrays.add(path);
                }
                choices.add(java.util.Collections.singletonList(StableKeyOrder.canonical(value)));
            }
        }
        if (arrays.size() > 1) {
            throw new CannotIndexParallelArraysError(arrays);
        }
        Object id = Missing.ofNullable(document.get("_id"));
        NavigableSet<KeyValue> keys = new TreeSet<>(order);
        combine(choices, 0, new ArrayList<>(), StableKeyOrder.canonical(id), keys);
        return keys;
    }

    private static void combine(
            List<List<Object>> choices, int at, List<Object> chosen, Object id, NavigableSet<KeyValue> into) {
        if (at == choices.size()) {
            List<Object> key = new ArrayList<>(chosen);
            key.add(id);
            into.add(new KeyValue(key));
            return;
        }
        for (Object value : choices.get(at)) {
            chosen.add(value);
            combine(choices, at + 1, chosen, id, into);
            chosen.remove(chosen.size() - 1);
        }
    }

    /** Whether the document holds an array in an indexed field (checked before it is entered). */
    private boolean holdsArray(Document document) {
        for (String path : keys()) {
            if (Utils.getSubdocumentValueCollectionAware(document, path) instanceof Collection<?>) {
                return true;
            }
        }
        return false;
    }

    @Override
    public P getPosition(Document document) {
        return entries.get(entriesOf(document).first());
    }

    @Override
    public void checkAdd(Document document, MongoCollection<P> collection) {
        entriesOf(document);
    }

    @Override
    public void add(Document document, P position, MongoCollection<P> collection) {
        if (holdsArray(document)) {
            entries.markMultikey();
        }
        for (KeyValue key : entriesOf(document)) {
            entries.put(key, position);
        }
    }

    /** Removes the document's entries; its position (every document has at least one entry). */
    @Override
    public P remove(Document document) {
        P position = null;
        for (KeyValue key : entriesOf(document)) {
            P removed = entries.remove(key);
            if (removed != null) {
                position = removed;
            }
        }
        return position;
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<P> collection) {
        entriesOf(newDocument);
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, P position, MongoCollection<P> collection) {
        NavigableSet<KeyValue> before = entriesOf(oldDocument);
        NavigableSet<KeyValue> after = entriesOf(newDocument);
        if (sameEntries(before, after)) {
            return; // an update of other fields
        }
        for (KeyValue key : before) {
            entries.remove(key);
        }
        add(newDocument, position, collection);
    }

    /** Equal in the index's exact order (not {@code equals}: a document equals another with its fields reordered). */
    private boolean sameEntries(NavigableSet<KeyValue> a, NavigableSet<KeyValue> b) {
        if (a.size() != b.size()) {
            return false;
        }
        Iterator<KeyValue> x = a.iterator();
        Iterator<KeyValue> y = b.iterator();
        while (x.hasNext()) {
            if (order.compare(x.next(), y.next()) != 0) {
                return false;
            }
        }
        return true;
    }

    /** The engine asks every index whether it answers a query; this one is walked by a plan of its own only. */
    @Override
    public boolean canHandle(Document query) {
        return false;
    }

    @Override
    public Iterable<P> getPositions(Document query) {
        throw new UnsupportedOperationException("a secondary index answers no query of the engine's");
    }

    @Override
    public long getCount() {
        return entries.size();
    }

    @Override
    public long getDataSize() {
        return getCount();
    }

    @Override
    public void drop() {
        entries.drop();
    }

    boolean multikey() {
        return entries.multikey();
    }

    Iterator<Map.Entry<KeyValue, P>> walk(KeyValue from, KeyValue to, boolean backwards) {
        return entries.walk(from, to, backwards);
    }

    IndexKeyOrder order() {
        return order;
    }

    List<String> fields() {
        return keys();
    }
}
