package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.session.RetriedAnswer;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.session.Transaction;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.write.WriteExecutor;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A member's writes outside transactions: under the write lock, each change committed to the oplog as it is made, a
 * retryable write answered once (a retry gets the recorded answer), then acknowledged as its write concern asks.
 */
final class WriteCommands {
    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final SessionCatalog sessions;
    private final TransactionCommands transactions;
    private final WriteAdmission admission;
    private final WriteConcernWait writeConcern;

    WriteCommands(
            ReplicationCoordinator coordinator,
            MemberState self,
            SessionCatalog sessions,
            TransactionCommands transactions,
            WriteAdmission admission,
            WriteConcernWait writeConcern) {
        this.coordinator = coordinator;
        this.self = self;
        this.sessions = sessions;
        this.transactions = transactions;
        this.admission = admission;
        this.writeConcern = writeConcern;
    }

    CommandResult write(Channel channel, String db, String name, BsonDocument command) {
        BsonDocument lsid = command.isDocument("lsid") ? command.getDocument("lsid") : null;
        Long txnNumber =
                command.isNumber("txnNumber") ? command.getNumber("txnNumber").longValue() : null;
        admission.requirePrimary();
        if (command.containsKey("autocommit")) {
            return transactions.transactionalWrite(channel, db, name, command);
        }
        boolean retryable = lsid != null && txnNumber != null;
        coordinator.durability().refuseIfFailed();
        Object owner = new Object();
        admission.lock(owner);
        OplogPosition[] last = {self.applied()};
        BsonDocument reply = null;
        RuntimeException failed = null;
        Optional<SessionCatalog.RecordedWrite> recorded;
        try {
            admission.requirePrimary();
            // Looked up under the write lock: a server checks a session out to one command at a time, so an
            // attempt still running and its retry never both find no record and both apply.
            recorded = retryable ? sessions.recorded(lsid, txnNumber) : Optional.empty();
        } catch (RuntimeException e) {
            coordinator.writeLock().release(owner);
            throw e;
        }
        if (recorded.isPresent()) {
            coordinator.writeLock().release(owner);
            BsonDocument answer = BsonBridge.mutable(
                    RetriedAnswer.of(recorded.get().command(), recorded.get().reply(), name, command));
            writeConcern.await(command, recorded.get().position(), answer);
            return new CommandResult(answer, recorded.get().position().clusterTime());
        }
        try {
            WriteExecutor executor = new WriteExecutor(
                    self.store(),
                    channel,
                    change -> {
                        coordinator.holds().passBeforeOplog(self);
                        last[0] = coordinator.commit(self, List.of(change), lsid, txnNumber, false);
                        sessions.committed(last[0], List.of(change));
                    },
                    (database, coll, ids) -> waitOutTransactions(owner, database, coll, ids),
                    (database, coll, filter) -> transactions.heldMatches(database, coll, filter, null),
                    statement -> {
                        coordinator.holds().passDocumentHold(self);
                        if (self.isStopping()) {
                            // as mongod at shutdown: a multi-document statement stops between documents (those before
                            // stay written), so the stop never waits for the rest of a minutes-long updateMany
                            throw new ReplicationException(
                                    11600, "InterruptedAtShutdown", "interrupted at shutdown between two documents");
                        }
                        // in flight (what majority reads wait for) only once it may change storage: a step waiting
                        // for a long read to leave the visibility lock made every majority read wait with it
                        return sessions.snapshotsOpen()
                                ? sessions.changeUncommitted(
                                        () -> coordinator.inFlight().writing(self, statement))
                                : coordinator.inFlight().writing(self, statement);
                    });
            reply = executor.execute(db, name, command);
            if (retryable && WriteExecutor.isOk(reply)) {
                sessions.record(lsid, txnNumber, name, reply, last[0]);
            }
        } catch (RuntimeException e) {
            failed = e;
        } finally {
            coordinator.writeLock().release(owner);
        }
        if (failed != null) {
            coordinator.durability().refuseIfAFlushFailed(); // the disk's cause, not the store H2 closed under us
            throw failed;
        }
        BsonDocument mutableReply = BsonBridge.mutable(reply);
        writeConcern.await(command, last[0], mutableReply);
        return new CommandResult(mutableReply, last[0].clusterTime());
    }

    /**
     * A write outside transactions that meets documents an open transaction changed waits for it
     * to end (as MongoDB does), with the write lock released meanwhile; false = look again.
     */
    private boolean waitOutTransactions(Object owner, String db, String coll, List<BsonValue> ids) {
        Optional<Transaction> holder = sessions.holder(self.index(), db, coll, ids, null);
        if (holder.isEmpty()) {
            return true;
        }
        Transaction t = holder.get();
        coordinator.writeWaitsForATransaction();
        coordinator.writeLock().release(owner);
        boolean ended = coordinator
                .progress()
                .await(
                        () -> t.state() != Transaction.State.IN_PROGRESS,
                        WriteAdmission.WRITE_LOCK_WAIT.toMillis(),
                        TimeUnit.MILLISECONDS);
        admission.lock(owner);
        if (!ended) {
            throw new ReplicationException(
                    50,
                    "MaxTimeMSExpired",
                    "waited " + WriteAdmission.WRITE_LOCK_WAIT.toSeconds()
                            + "s for a transaction holding a document of " + db + "." + coll + " to commit or abort");
        }
        admission.requirePrimary();
        return false;
    }
}
