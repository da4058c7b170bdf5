package io.thermocline.embedded.write;

import io.thermocline.embedded.storage.MemberStore;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * Unique keys other open transactions still hold. A transaction that changes or deletes a document frees its unique
 * keys in storage at once, but on MongoDB the index keeps each key for that transaction until it ends: another write
 * giving a document the key conflicts (WriteConflict in a transaction; a plain write waits), and the key is back
 * if the transaction aborts. Without this, two documents could be acknowledged with one unique key, and the abort
 * could not restore the first.
 */
final class HeldUniqueKeys {

    private final MemberStore store;
    private final WriteExecutor.HeldMatches held;

    HeldUniqueKeys(MemberStore store, WriteExecutor.HeldMatches held) {
        this.store = store;
        this.held = held;
    }

    /** The documents whose version before another open transaction's change has a unique key {@code document} has (not itself). */
    List<BsonValue> holders(String db, String coll, BsonDocument document) {
        if (!anyChanged(db, coll)) {
            return List.of();
        }
        BsonArray keys = new BsonArray();
        for (BsonDocument spec : store.indexes(db, coll)) {
            if (enforcedEverywhere(spec)) {
                keys.add(keyOf(spec.getDocument("key"), document));
            }
        }
        if (keys.isEmpty()) {
            return List.of();
        }
        List<BsonValue> ids = new ArrayList<>(
                held.matching(db, coll, keys.size() == 1 ? keys.get(0).asDocument() : new BsonDocument("$or", keys)));
        ids.remove(document.get("_id"));
        return ids;
    }

    /**
     * Whether another open transaction changed a document of the collection: without one no key is held, and the
     * common case costs neither an index listing nor a look at what a write wrote.
     */
    boolean anyChanged(String db, String coll) {
        return !held.matching(db, coll, new BsonDocument()).isEmpty();
    }

    /** A unique secondary index over every document (sparse and partial ones are left to storage). */
    private static boolean enforcedEverywhere(BsonDocument spec) {
        BsonDocument key = spec.getDocument("key", new BsonDocument());
        return truthy(spec.get("unique"))
                && !truthy(spec.get("sparse"))
                && !spec.containsKey("partialFilterExpression")
                && !key.isEmpty()
                && !(key.size() == 1 && key.containsKey("_id"));
    }

    private static boolean truthy(BsonValue value) {
        return value != null
                && (value.isBoolean()
                        ? value.asBoolean().getValue()
                        : value.isNumber() && value.asNumber().doubleValue() != 0);
    }

    /** A filter matching the documents with {@code document}'s key in the index (an array: any of its elements). */
    private static BsonDocument keyOf(BsonDocument indexKey, BsonDocument document) {
        BsonDocument filter = new BsonDocument();
        for (String field : indexKey.keySet()) {
            BsonValue value = valueAt(document, field);
            filter.append(
                    field, value.isArray() ? new BsonDocument("$in", value.asArray()) : new BsonDocument("$eq", value));
        }
        return filter;
    }

    private static BsonValue valueAt(BsonDocument document, String path) {
        BsonValue current = document;
        for (String part : path.split("\\.")) {
            if (current == null || !current.isDocument()) {
                return BsonNull.VALUE;
            }
            current = current.asDocument().get(part);
        }
        return current == null ? BsonNull.VALUE : current;
    }
}
