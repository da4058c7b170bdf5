package io.thermocline.embedded.session;

import io.thermocline.embedded.oplog.Change;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A multi-document transaction: its writes are applied to the primary's storage as they come
 * (under the write lock it holds until commit or abort), and staged for the oplog, which receives
 * them together at commit. Abort restores the pre-images in reverse order.
 */
public final class Transaction {
    public enum State { IN_PROGRESS, COMMITTED, ABORTED }

    private final BsonDocument lsid;
    private final long txnNumber;
    private final int primaryIndex;
    private final long deadlineMillis;
    private final List<Change> changes = new ArrayList<>();
    private final java.util.Set<String> touched = new java.util.HashSet<>();
    private volatile State state = State.IN_PROGRESS;

    Transaction(BsonDocument lsid, long txnNumber, int primaryIndex, long deadlineMillis) {
        this.lsid = lsid;
        this.txnNumber = txnNumber;
        this.primaryIndex = primaryIndex;
        this.deadlineMillis = deadlineMillis;
    }

    public BsonDocument lsid() {
        return lsid;
    }

    public long txnNumber() {
        return txnNumber;
    }

    public int primaryIndex() {
        return primaryIndex;
    }

    public long deadlineMillis() {
        return deadlineMillis;
    }

    public State state() {
        return state;
    }

    void state(State value) {
        state = value;
    }

    public synchronized void stage(Change change) {
        changes.add(change);
        if (change.documentKey() != null) {
            touched.add(change.database() + "." + change.collection() + "\u0000" + change.documentKey().get("_id"));
        }
    }

    /** Whether this transaction changed the document (so others must not until it ends). */
    public synchronized boolean touches(String database, String collection, BsonValue id) {
        return touched.contains(database + "." + collection + "\u0000" + id);
    }

    public synchronized List<Change> changes() {
        return List.copyOf(changes);
    }
}
