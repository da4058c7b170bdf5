package io.thermocline.embedded.write;

import io.thermocline.embedded.storage.MemberStore;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Where a write meets what other open transactions hold: the documents they changed (storage shows them uncommitted)
 * and the unique keys they freed ({@link HeldUniqueKeys}). The {@link WriteExecutor.ConflictGuard} decides: wait for
 * the holder, or (in a transaction) conflict.
 */
final class HeldDocuments {
    /** Marks a statement undone because another open transaction holds a unique key it gave a document. */
    static final String KEY_HELD_BY = "$keyHeldBy";

    private final MemberStore store;
    private final WriteExecutor.ConflictGuard guard;
    private final WriteExecutor.HeldMatches held;
    private final HeldUniqueKeys heldKeys;

    HeldDocuments(MemberStore store, WriteExecutor.ConflictGuard guard, WriteExecutor.HeldMatches held) {
        this.store = store;
        this.guard = guard;
        this.held = held;
        this.heldKeys = new HeldUniqueKeys(store, held);
    }

    /** Whether the statement may change these documents now; false after it waited (look them up again). */
    boolean clear(String db, String coll, List<BsonValue> ids) {
        return guard.clear(db, coll, ids);
    }

    /** The documents whose version before another open transaction's change has a unique key {@code document} has. */
    List<BsonValue> keyHolders(String db, String coll, BsonDocument document) {
        return heldKeys.holders(db, coll, document);
    }

    /**
     * The documents a statement changes, found in storage once no other open transaction holds one of them or one whose
     * committed version matches: the guard waits for (or conflicts with) the holder, and they are looked up again.
     */
    List<RawBsonDocument> targets(String db, String coll, BsonDocument filter, BsonDocument sort, int limit) {
        while (true) {
            List<RawBsonDocument> found = store.find(db, coll, filter, sort, limit);
            List<BsonValue> ids = new ArrayList<>(found.size());
            found.forEach(d -> ids.add(d.get("_id")));
            // a single unsorted target found in storage is a valid pick; otherwise a held document may be one
            if (limit == 0 || found.isEmpty() || (sort != null && !sort.isEmpty())) {
                for (BsonValue id : held.matching(db, coll, filter)) {
                    if (!ids.contains(id)) {
                        ids.add(id);
                    }
                }
            }
            if (guard.clear(db, coll, ids)) {
                return found;
            }
        }
    }

    /**
     * An upsert by {@code _id} may create that document: like an insert, it meets another open
     * transaction's write of the same {@code _id} even where storage shows nothing (inserted and
     * removed again, or removed), as MongoDB's unique index does.
     */
    void awaitUpsertId(String db, String coll, BsonDocument filter) {
        BsonValue id = filter.get("_id");
        if (id != null
                && id.isDocument()
                && id.asDocument().size() == 1
                && id.asDocument().containsKey("$eq")) {
            id = id.asDocument().get("$eq");
        }
        if (id == null
                || (id.isDocument()
                        && !id.asDocument().isEmpty()
                        && id.asDocument().getFirstKey().startsWith("$"))) {
            return;
        }
        while (!guard.clear(db, coll, List.of(id))) {
            Thread.onSpinWait();
        }
    }

    /**
     * After an update's storage write, before anything records it: when a document it wrote now has a unique key
     * another open transaction holds ({@link HeldUniqueKeys}), puts storage back as it was and returns the holders.
     */
    BsonArray undoneForHeldKeys(String db, String coll, List<RawBsonDocument> before, BsonArray upserted) {
        BsonArray holders = new BsonArray();
        if (!heldKeys.anyChanged(db, coll)) {
            return holders; // no open transaction holds a key here: no storage read per written document
        }
        List<BsonValue> written = new ArrayList<>();
        before.forEach(pre -> written.add(pre.get("_id")));
        upserted.forEach(up -> written.add(up.asDocument().get("_id")));
        for (BsonValue id : written) {
            store.findById(db, coll, id)
                    .ifPresent(post -> heldKeys.holders(db, coll, post).forEach(holders::add));
        }
        if (!holders.isEmpty()) {
            before.forEach(pre -> store.upsert(db, coll, pre));
            upserted.forEach(up -> store.deleteById(db, coll, up.asDocument().get("_id")));
        }
        return holders;
    }
}
