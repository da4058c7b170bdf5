package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.session.Transaction;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.write.WriteExecutor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A member's multi-document transactions: a transaction begun by its first statement, its writes (staged; conflicts
 * as on a server), commitTransaction, abortTransaction, and endSessions (which aborts a session's open transaction).
 */
final class TransactionCommands {
    private static final int WRITE_CONFLICT = 112;

    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final SessionCatalog sessions;
    private final WriteAdmission admission;
    private final WriteConcernWait writeConcern;

    TransactionCommands(
            ReplicationCoordinator coordinator,
            MemberState self,
            SessionCatalog sessions,
            WriteAdmission admission,
            WriteConcernWait writeConcern) {
        this.coordinator = coordinator;
        this.self = self;
        this.sessions = sessions;
        this.admission = admission;
        this.writeConcern = writeConcern;
    }

    Transaction openTransaction(BsonDocument command) {
        BsonDocument lsid = command.isDocument("lsid") ? command.getDocument("lsid") : null;
        if (lsid == null || !command.isNumber("txnNumber")) {
            throw new ReplicationException(50768, "Location50768", "a transaction statement needs lsid and txnNumber");
        }
        long txnNumber = command.getNumber("txnNumber").longValue();
        if (command.getBoolean("startTransaction", BsonBoolean.FALSE).getValue()) {
            admission.requirePrimary();
            sessions.openTransaction(lsid)
                    .filter(open -> open.txnNumber() < txnNumber)
                    .ifPresent(this::abort);
            return sessions.begin(lsid, txnNumber, self.index());
        }
        Transaction t = sessions.transaction(lsid, txnNumber)
                .filter(tx -> tx.state() == Transaction.State.IN_PROGRESS)
                .orElseThrow(() -> new ReplicationException(
                        251,
                        "NoSuchTransaction",
                        "Transaction with txnNumber " + txnNumber + " has been aborted or does not exist."));
        if (t.primaryIndex() != self.index() || !coordinator.isPrimary(self)) {
            throw new ReplicationException(251, "NoSuchTransaction", "the transaction's primary stepped down");
        }
        return t;
    }

    /**
     * A transaction's statement. Any error in it (a write error such as a duplicate key too, reported in
     * {@code writeErrors}) aborts the transaction, as on a server: its later statements and its commit
     * get NoSuchTransaction (251, TransientTransactionError). The error itself carries that label only
     * for the conflict kinds ({@link ErrorLabels#of}). Writing a document another open transaction holds, or one
     * committed after this transaction's snapshot, is such a conflict (WriteConflict).
     */
    CommandResult transactionalWrite(Channel channel, String db, String name, BsonDocument command) {
        Transaction t = openTransaction(command);
        Object owner = new Object();
        boolean failed = true;
        try {
            admission.lock(owner);
            if (t.state() != Transaction.State.IN_PROGRESS) {
                throw new ReplicationException(
                        251, "NoSuchTransaction", "Transaction " + t.txnNumber() + " has been aborted.");
            }
            admission.requirePrimary();
            sessions.takeSnapshot(t, self.applied());
            WriteExecutor executor = new WriteExecutor(
                    self.store(),
                    channel,
                    t::stage,
                    (database, coll, ids) -> {
                        if (sessions.holder(self.index(), database, coll, ids, t)
                                        .isPresent()
                                || sessions.changedSinceSnapshot(t, database, coll, ids)) {
                            throw new ReplicationException(
                                    WRITE_CONFLICT,
                                    "WriteConflict",
                                    "Write conflict during plan execution and yielding is disabled.");
                        }
                        return true;
                    },
                    (database, coll, filter) -> heldMatches(database, coll, filter, t),
                    statement -> {
                        coordinator.holds().passDocumentHold(self);
                        return sessions.changeUncommitted(statement);
                    });
            // each document's storage write and its staging are one step for committed readers, who wait for one
            // document, never a whole statement (a 1,000-document copy-up held every read of the member for 30 s
            // on the on-disk engine); a command without document steps (DDL) is one step whole
            BsonDocument reply = WriteExecutor.writesDocumentByDocument(name)
                    ? executor.execute(db, name, command)
                    : sessions.changeUncommitted(() -> executor.execute(db, name, command));
            failed = !WriteExecutor.isOk(reply) || reply.containsKey("writeErrors");
            return new CommandResult(reply, coordinator.operationTime(self));
        } finally {
            coordinator.writeLock().release(owner);
            if (failed) {
                abort(t);
            }
        }
    }

    CommandResult commitTransaction(BsonDocument command) {
        BsonDocument lsid = command.getDocument("lsid");
        long txnNumber = command.getNumber("txnNumber").longValue();
        Transaction t = existing(lsid, txnNumber);
        if (t.state() == Transaction.State.ABORTED) {
            throw new ReplicationException(251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
        }
        if (t.state() == Transaction.State.COMMITTED) {
            OplogPosition committed = self.applied();
            BsonDocument reply = MemberStore.okReply();
            writeConcern.await(command, committed, reply);
            return new CommandResult(reply, committed.clusterTime());
        }
        admission.requirePrimary();
        coordinator.durability().refuseIfFailed();
        Object owner = new Object();
        admission.lock(owner);
        OplogPosition position = null;
        RuntimeException failed = null;
        try {
            if (t.state() != Transaction.State.IN_PROGRESS || !coordinator.isPrimary(self)) {
                throw new ReplicationException(
                        251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
            }
            List<Change> changes = t.changes();
            position = sessions.commit(t, () -> coordinator.commit(self, changes, lsid, txnNumber, true));
        } catch (RuntimeException e) {
            failed = e;
        } finally {
            coordinator.writeLock().release(owner);
        }
        if (failed != null) {
            coordinator.durability().refuseIfAFlushFailed(); // the disk's cause, not the store H2 closed under us
            throw failed;
        }
        coordinator.progress().signalAll();
        BsonDocument reply = MemberStore.okReply();
        writeConcern.await(command, position, reply);
        return new CommandResult(reply, position.clusterTime());
    }

    /** The session's transaction {@code txnNumber} in whatever state it is; NoSuchTransaction (251) if it never began. */
    private Transaction existing(BsonDocument lsid, long txnNumber) {
        return sessions.transaction(lsid, txnNumber)
                .orElseThrow(() -> new ReplicationException(
                        251, "NoSuchTransaction", "Transaction with txnNumber " + txnNumber + " does not exist."));
    }

    /** Ending a session aborts its open transaction, as on a server (its writes would otherwise stay held until it expires). */
    CommandResult endSessions(BsonValue ended) {
        if (ended != null && ended.isArray()) {
            for (BsonValue lsid : ended.asArray()) {
                if (lsid.isDocument() && lsid.asDocument().containsKey("id")) {
                    sessions.openTransaction(lsid.asDocument()).ifPresent(this::abort);
                }
            }
        }
        return new CommandResult(MemberStore.okReply(), coordinator.operationTime(self));
    }

    CommandResult abortTransaction(BsonDocument command) {
        BsonDocument lsid = command.getDocument("lsid");
        long txnNumber = command.getNumber("txnNumber").longValue();
        Transaction t = existing(lsid, txnNumber);
        if (t.state() == Transaction.State.COMMITTED) {
            throw new ReplicationException(
                    256, "TransactionCommitted", "Transaction " + txnNumber + " has been committed.");
        }
        if (t.state() != Transaction.State.IN_PROGRESS) {
            throw new ReplicationException(251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
        }
        abort(t);
        return new CommandResult(MemberStore.okReply(), coordinator.operationTime(self));
    }

    /** Aborts a transaction, undoing its writes on the member it ran on, and wakes writers waiting for it. */
    void abort(Transaction t) {
        Object owner = new Object();
        coordinator.writeLock().acquire(owner, WriteAdmission.WRITE_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            sessions.abort(t, coordinator.members().get(t.primaryIndex()).store());
        } finally {
            coordinator.writeLock().release(owner);
        }
        coordinator.progress().signalAll();
    }

    /**
     * Documents other open transactions changed whose committed version matches a write's filter, and
     * for a transaction's write those whose version at its snapshot matches: storage no longer shows
     * them matching, yet the write must meet them (wait, or conflict).
     */
    List<BsonValue> heldMatches(String db, String coll, BsonDocument filter, Transaction writer) {
        List<BsonValue> ids = new ArrayList<>();
        Map<BsonValue, BsonDocument> versions = new LinkedHashMap<>();
        if (writer != null) {
            versions.putAll(sessions.snapshotVersions(writer, db, coll));
        }
        sessions.uncommittedPreImages(self.index(), db, coll, writer).forEach(versions::putIfAbsent);
        boolean everything = filter.isEmpty(); // asked for any held document at all: no document needs judging
        versions.forEach((id, version) -> {
            if (version != null && (everything || CommittedView.matches(version, filter))) {
                ids.add(id);
            }
        });
        return ids;
    }
}
