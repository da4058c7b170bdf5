package io.thermocline.embedded.session;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.storage.MemberStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logical sessions of one replica set: the retryable-write record (reply per lsid and txnNumber,
 * so a retried write is answered, not re-applied) and each session's open transaction.
 *
 * <p>Transactions write to the primary's storage at once, so readers outside them must hide their
 * writes. The visibility lock keeps storage and the set of open transactions consistent for such
 * readers: a transaction's statement (storage write and staging), its commit (oplog entries and
 * the committed state) and its abort (state and undo) each happen whole between two reads.
 *
 * <p>Snapshot isolation: a transaction's first statement takes its snapshot under the write lock;
 * from then on every commit is recorded in a {@link CommitHistory} until no open snapshot predates
 * it, so the transaction reads each document as of its snapshot and a write to a document
 * committed since is a WriteConflict.
 */
public final class SessionCatalog {
    private static final Logger log = LoggerFactory.getLogger(SessionCatalog.class);

    /** A retryable write's command name and outcome, and where its last entry sits (rolled back with it). */
    public record RecordedWrite(long txnNumber, String command, BsonDocument reply, OplogPosition position) {}

    private static final class Session {
        long highestTxnNumber = -1;
        RecordedWrite lastWrite;
        Transaction transaction;
    }

    private final Map<BsonValue, Session> sessions = new ConcurrentHashMap<>();
    private final Duration transactionLifetime;
    private final ReentrantReadWriteLock visibility = new ReentrantReadWriteLock();
    private final CommitHistory history = new CommitHistory();

    public SessionCatalog(Duration transactionLifetime) {
        this.transactionLifetime = transactionLifetime;
    }

    /** Runs a read of storage plus {@link #uncommittedPreImages} as of one moment between transactions' changes. */
    public <T> T readCommitted(Supplier<T> read) {
        visibility.readLock().lock();
        try {
            return read.get();
        } finally {
            visibility.readLock().unlock();
        }
    }

    /** Runs a change of what is uncommitted (a transaction's statement or commit) unseen by committed readers. */
    public <T> T changeUncommitted(Supplier<T> change) {
        visibility.writeLock().lock();
        try {
            return change.get();
        } finally {
            visibility.writeLock().unlock();
        }
    }

    private Session session(BsonDocument lsid) {
        return sessions.computeIfAbsent(lsid.get("id"), id -> new Session());
    }

    /** The recorded reply when this (lsid, txnNumber) already ran; an error when the number is stale. */
    public synchronized Optional<RecordedWrite> recorded(BsonDocument lsid, long txnNumber) {
        Session s = session(lsid);
        if (s.lastWrite != null && s.lastWrite.txnNumber() == txnNumber) {
            return Optional.of(s.lastWrite);
        }
        if (txnNumber < s.highestTxnNumber) {
            throw new ReplicationException(
                    225,
                    "TransactionTooOld",
                    "Retryable write with txnNumber " + txnNumber
                            + " is prohibited on session because a newer retryable write with txnNumber "
                            + s.highestTxnNumber
                            + " has already started on this session.");
        }
        return Optional.empty();
    }

    public synchronized void record(
            BsonDocument lsid, long txnNumber, String command, BsonDocument reply, OplogPosition position) {
        Session s = session(lsid);
        s.highestTxnNumber = Math.max(s.highestTxnNumber, txnNumber);
        s.lastWrite = new RecordedWrite(txnNumber, command, reply, position);
    }

    /** Rollback: writes whose entries were discarded were never durable, so a retry must run again. */
    public synchronized void forgetAfter(OplogPosition position) {
        history.forgetAfter(position);
        for (Session s : sessions.values()) {
            if (s.lastWrite != null && s.lastWrite.position().isAfter(position)) {
                s.lastWrite = null;
            }
        }
    }

    /** The session's open transaction, if any: a newer transaction on the session aborts it first. */
    public synchronized Optional<Transaction> openTransaction(BsonDocument lsid) {
        Transaction t = session(lsid).transaction;
        return t != null && t.state() == Transaction.State.IN_PROGRESS ? Optional.of(t) : Optional.empty();
    }

    public synchronized Transaction begin(BsonDocument lsid, long txnNumber, int primaryIndex) {
        Session s = session(lsid);
        if (txnNumber < s.highestTxnNumber || (txnNumber == s.highestTxnNumber && s.transaction != null)) {
            throw new ReplicationException(
                    225,
                    "TransactionTooOld",
                    "txnNumber " + txnNumber + " is not newer than the session's " + s.highestTxnNumber);
        }
        s.highestTxnNumber = txnNumber;
        s.transaction = new Transaction(
                lsid, txnNumber, primaryIndex, System.currentTimeMillis() + transactionLifetime.toMillis());
        return s.transaction;
    }

    /** The session's transaction with this number, in whatever state it is. */
    public synchronized Optional<Transaction> transaction(BsonDocument lsid, long txnNumber) {
        Transaction t = session(lsid).transaction;
        return t != null && t.txnNumber() == txnNumber ? Optional.of(t) : Optional.empty();
    }

    public synchronized List<Transaction> openTransactions() {
        List<Transaction> open = new ArrayList<>();
        for (Session s : sessions.values()) {
            if (s.transaction != null && s.transaction.state() == Transaction.State.IN_PROGRESS) {
                open.add(s.transaction);
            }
        }
        return open;
    }

    /**
     * Takes the transaction's snapshot at its first statement. The caller holds the write lock, so no
     * plain write is between its storage change and its commit record.
     */
    public void takeSnapshot(Transaction t, OplogPosition primaryApplied) {
        if (t.snapshot() == null) {
            t.snapshot(primaryApplied);
        }
    }

    /**
     * Whether a commit now must be recorded for open snapshots. The caller holds the write lock (as
     * {@link #takeSnapshot} does): when none is open, none can open before its commit is recorded.
     */
    public boolean snapshotsOpen() {
        return oldestSnapshot() != null;
    }

    private OplogPosition oldestSnapshot() {
        OplogPosition oldest = null;
        for (Transaction t : openTransactions()) {
            OplogPosition s = t.snapshot();
            if (s != null && (oldest == null || oldest.isAfter(s))) {
                oldest = s;
            }
        }
        return oldest;
    }

    /**
     * Records changes committed at a position (a plain write's or a transaction's) for the open
     * snapshots. A plain write calls it inside {@link #changeUncommitted} with its storage write when
     * {@link #snapshotsOpen}, so a snapshot reader sees both or neither.
     */
    public void committed(OplogPosition position, List<Change> changes) {
        OplogPosition oldest = oldestSnapshot();
        history.forgetThrough(oldest);
        if (oldest != null) {
            history.record(position, changes);
        }
    }

    /** The version at the transaction's snapshot (null: absent) of each document of a collection committed since. */
    public Map<BsonValue, BsonDocument> snapshotVersions(Transaction t, String database, String collection) {
        return t.snapshot() == null ? Map.of() : history.versionsAt(t.snapshot(), database, collection);
    }

    /** Whether one of these documents was committed after the transaction's snapshot: writing it is a write conflict. */
    public boolean changedSinceSnapshot(Transaction t, String database, String collection, List<BsonValue> ids) {
        return t.snapshot() != null && history.changedAfter(t.snapshot(), database, collection, ids);
    }

    /**
     * For readers outside transactions: the committed version (null: absent) of every document of a
     * collection that open transactions on a member have changed but not committed yet. A reader in a
     * transaction passes it as except: it sees its own writes. Call inside {@link #readCommitted}.
     */
    public Map<BsonValue, BsonDocument> uncommittedPreImages(
            int memberIndex, String database, String collection, Transaction except) {
        Map<BsonValue, BsonDocument> committed = new LinkedHashMap<>();
        for (Transaction t : openTransactions()) {
            if (t == except || t.primaryIndex() != memberIndex) {
                continue;
            }
            t.addCommittedVersions(database, collection, committed);
        }
        return committed;
    }

    /** Another open transaction on this member holding one of these documents, if any. */
    public Optional<Transaction> holder(
            int memberIndex, String database, String collection, List<BsonValue> ids, Transaction except) {
        for (Transaction t : openTransactions()) {
            if (t == except || t.primaryIndex() != memberIndex) {
                continue;
            }
            for (BsonValue id : ids) {
                if (t.touches(database, collection, id)) {
                    return Optional.of(t);
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Commits: appends the transaction's entries (the caller's append, under the write lock), records
     * them for open snapshots and marks it committed in one step for committed readers, so none sees
     * its entries while it still counts as open.
     */
    public OplogPosition commit(Transaction t, Supplier<OplogPosition> append) {
        return changeUncommitted(() -> {
            OplogPosition appended = append.get();
            t.state(Transaction.State.COMMITTED);
            committed(appended, t.changes());
            return appended;
        });
    }

    /** Undoes a transaction's writes on the storage it ran on. Returns false when it was not open. */
    public boolean abort(Transaction t, MemberStore store) {
        return changeUncommitted(() -> undo(t, store));
    }

    private boolean undo(Transaction t, MemberStore store) {
        synchronized (t) {
            if (t.state() != Transaction.State.IN_PROGRESS) {
                return false;
            }
            t.state(Transaction.State.ABORTED);
        }
        List<Change> changes = new ArrayList<>(t.changes());
        Collections.reverse(changes);
        for (Change c : changes) {
            switch (c.operation()) {
                case INSERT, UPDATE, REPLACE, DELETE -> {
                    BsonValue id = c.documentKey().get("_id");
                    if (c.preImage() == null) {
                        store.deleteById(c.database(), c.collection(), id);
                    } else {
                        store.upsert(c.database(), c.collection(), c.preImage());
                    }
                }
                default ->
                    log.warn("event=abortCannotUndo op={} ns={}.{}", c.operation(), c.database(), c.collection());
            }
        }
        return true;
    }
}
