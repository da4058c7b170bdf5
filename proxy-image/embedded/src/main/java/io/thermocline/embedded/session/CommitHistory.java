package io.thermocline.embedded.session;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The document changes committed on the primary after the oldest open transaction's snapshot: what
 * a transaction must not see (it reads each such document's version at its snapshot, the first
 * change's pre-image) and must not overwrite (a write to such a document is a write conflict: the
 * first committer wins, as WiredTiger decides on a server).
 */
final class CommitHistory {
    /** A committed change with its document's {@code _id} ready to hash (see {@link Transaction#comparable}). */
    private record Committed(OplogPosition position, Change change, BsonValue id) {}

    private final Deque<Committed> changes = new ArrayDeque<>();

    synchronized void record(OplogPosition position, List<Change> committed) {
        for (Change c : committed) {
            if (c.documentKey() != null) {
                changes.addLast(new Committed(
                        position, c, Transaction.comparable(c.documentKey().get("_id"))));
            }
        }
    }

    /** Forgets what no open snapshot can need: changes at or before the oldest snapshot (null: all). */
    synchronized void forgetThrough(OplogPosition oldestSnapshot) {
        while (!changes.isEmpty()
                && (oldestSnapshot == null || !changes.peekFirst().position().isAfter(oldestSnapshot))) {
            changes.removeFirst();
        }
    }

    /** Rollback: changes after the position never happened. */
    synchronized void forgetAfter(OplogPosition position) {
        changes.removeIf(c -> c.position().isAfter(position));
    }

    /** Each document of a collection changed after the snapshot, with its version at the snapshot (null: absent). */
    synchronized Map<BsonValue, BsonDocument> versionsAt(OplogPosition snapshot, String database, String collection) {
        Map<BsonValue, BsonDocument> versions = new LinkedHashMap<>();
        for (Iterator<Committed> it = changes.descendingIterator(); it.hasNext(); ) {
            Committed c = it.next();
            if (!c.position().isAfter(snapshot)) {
                break;
            }
            if (in(c.change(), database, collection)) {
                // walking back from the newest: the earliest change's pre-image is what the snapshot held
                versions.put(c.id(), c.change().preImage());
            }
        }
        return versions;
    }

    synchronized boolean changedAfter(OplogPosition snapshot, String database, String collection, List<BsonValue> ids) {
        Set<BsonValue> wanted = new HashSet<>();
        ids.forEach(id -> wanted.add(Transaction.comparable(id)));
        for (Iterator<Committed> it = changes.descendingIterator(); it.hasNext(); ) {
            Committed c = it.next();
            if (!c.position().isAfter(snapshot)) {
                return false;
            }
            if (in(c.change(), database, collection) && wanted.contains(c.id())) {
                return true;
            }
        }
        return false;
    }

    private static boolean in(Change c, String database, String collection) {
        return database.equals(c.database()) && collection.equals(c.collection());
    }
}
