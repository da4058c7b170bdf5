package io.thermocline.embedded.session;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A multi-document transaction: its writes are applied to the primary's storage as they come
 * (each statement under the write lock), and staged for the oplog, which receives them together at
 * commit. Abort restores the pre-images in reverse order. Its first statement takes its snapshot:
 * the primary's position then, which its reads see and its writes must not have been overtaken since.
 */
public final class Transaction {
    public enum State { IN_PROGRESS, COMMITTED, ABORTED }

    private final BsonDocument lsid;
    private final long txnNumber;
    private final int primaryIndex;
    private final long deadlineMillis;
    private final List<Change> changes = new ArrayList<>();
    private final Set<String> touched = new HashSet<>();
    private volatile State state = State.IN_PROGRESS;
    private volatile OplogPosition snapshot;

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

    /** The position its snapshot was taken at; null before its first statement. */
    public OplogPosition snapshot() {
        return snapshot;
    }

    void snapshot(OplogPosition value) {
        snapshot = value;
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
