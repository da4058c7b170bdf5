package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.thermocline.embedded.changestream.ChangeStreamCursors;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.session.RetriedAnswer;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.session.Transaction;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.write.WriteExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers one member's commands: replica-set, session, transaction and change-stream commands
 * here; writes through the oplog; everything else on the member's storage engine. Every reply
 * carries operationTime and $clusterTime.
 */
final class CommandDispatcher {
    private static final Logger log = LoggerFactory.getLogger(CommandDispatcher.class);
    private static final Set<String> READS = Set.of(
            "find",
            "aggregate",
            "count",
            "distinct",
            "listcollections",
            "listindexes",
            "dbstats",
            "collstats",
            "mapreduce");
    private static final Set<Integer> RETRYABLE_CODES =
            Set.of(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436);
    /** Errors after which drivers re-check the server; they carry the member's topologyVersion. */
    private static final Set<Integer> STATE_CHANGE_CODES = Set.of(91, 189, 10107, 11600, 11602, 13435, 13436);

    private static final Duration DEFAULT_WAIT = Duration.ofSeconds(60);
    private static final Duration WRITE_LOCK_WAIT = Duration.ofSeconds(30);
    private static final int WRITE_CONFLICT = 112;

    /** Thrown to make the connection close without a reply (failCommand closeConnection). */
    static final class CloseConnection extends RuntimeException {
        CloseConnection() {
            super("closeConnection fail point", null, false, false);
        }
    }

    private record Result(BsonDocument reply, BsonTimestamp operationTime) {}

    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final SessionCatalog sessions;
    private final FailPoints failPoints = new FailPoints();
    private final DelayedRequests delayedRequests = new DelayedRequests();
    private final ChangeStreamCursors changeStreams;
    private final boolean majorityByDefault;

    CommandDispatcher(
            ReplicationCoordinator coordinator, MemberState self, SessionCatalog sessions, boolean majorityByDefault) {
        this.coordinator = coordinator;
        this.self = self;
        this.sessions = sessions;
        this.majorityByDefault = majorityByDefault;
        this.changeStreams = new ChangeStreamCursors(coordinator, self, this::lookupCommitted);
    }

    void closeCursors() {
        changeStreams.closeAll();
    }

    BsonDocument dispatch(Channel channel, int connectionId, String db, BsonDocument command, boolean legacy) {
        String name = command.isEmpty() ? "" : command.getFirstKey();
        DelayedRequests.Held held = delayedRequests.pass(name);
        try {
            return dispatchNow(channel, connectionId, db, name, command, legacy);
        } finally {
            delayedRequests.ran(held);
        }
    }

    DelayedRequests delayedRequests() {
        return delayedRequests;
    }

    private BsonDocument dispatchNow(
            Channel channel, int connectionId, String db, String name, BsonDocument command, boolean legacy) {
        try {
            gossip(command);
            Optional<FailPoints.FailCommand> fail = failPoints.trigger(name);
            if (fail.isPresent()) {
                coordinator.topology().signalAll(); // wakes waitForFailPoint
                Result failed = applyFailPoint(fail.get(), channel, name, command);
                if (failed != null) {
                    return decorate(failed);
                }
            }
            return decorate(route(channel, connectionId, db, name, command, legacy));
        } catch (CloseConnection e) {
            throw e;
        } catch (ReplicationException e) {
            BsonDocument error = MemberStore.errorReply(e.code(), e.codeName(), e.getMessage());
            BsonArray labels = labels(e.code(), name, command);
            if (!labels.isEmpty()) {
                error.append("errorLabels", labels);
            }
            if (STATE_CHANGE_CODES.contains(e.code())) {
                error.append("topologyVersion", HelloReply.topologyVersion(self));
            }
            return decorate(new Result(error, coordinator.operationTime(self)));
        } catch (RuntimeException e) {
            log.warn("event=commandFailed member={} command={} error={}", self.index(), name, e.toString());
            return decorate(new Result(
                    MemberStore.errorReply(1, "InternalError", name + " failed: " + e),
                    coordinator.operationTime(self)));
        }
    }

    private Result applyFailPoint(FailPoints.FailCommand fail, Channel channel, String name, BsonDocument command) {
        if (fail.blockMillis() > 0) {
            long until = System.currentTimeMillis() + fail.blockMillis();
            coordinator
                    .topology()
                    .await(
                            () -> !channel.isActive() || System.currentTimeMillis() >= until,
                            fail.blockMillis(),
                            TimeUnit.MILLISECONDS);
            if (!channel.isActive() || !self.alive()) {
                throw new CloseConnection();
            }
        }
        if (fail.closeConnection()) {
            throw new CloseConnection();
        }
        if (fail.errorCode() != 0) {
            BsonDocument error = MemberStore.errorReply(
                    fail.errorCode(), "FailPoint", "Failing command via 'failCommand' failpoint");
            BsonArray labels =
                    fail.errorLabels().isEmpty() ? labels(fail.errorCode(), name, command) : fail.errorLabels();
            if (!labels.isEmpty()) {
                error.append("errorLabels", labels);
            }
            return new Result(error, coordinator.operationTime(self));
        }
        return null;
    }

    /** mongod's {@code {waitForFailPoint: 'failCommand', timesEntered: n, maxTimeMS: t}}: returns once n commands entered it. */
    private Result waitForFailPoint(BsonDocument command) {
        String name = command.get("waitForFailPoint").isString()
                ? command.getString("waitForFailPoint").getValue()
                : "";
        if (!"failCommand".equals(name)) {
            throw new ReplicationException(
                    2, "BadValue", "fail point " + name + " is not supported; only failCommand is");
        }
        if (!command.isNumber("timesEntered") || !command.isNumber("maxTimeMS")) {
            throw new ReplicationException(2, "BadValue", "waitForFailPoint needs timesEntered and maxTimeMS");
        }
        long times = command.getNumber("timesEntered").longValue();
        long maxMillis = command.getNumber("maxTimeMS").longValue();
        if (!coordinator.topology().await(() -> failPoints.timesEntered() >= times, maxMillis, TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(
                    50,
                    "MaxTimeMSExpired",
                    "fail point failCommand entered " + failPoints.timesEntered() + " times, not " + times
                            + ", within maxTimeMS " + maxMillis);
        }
        return new Result(MemberStore.okReply(), coordinator.operationTime(self));
    }

    private void gossip(BsonDocument command) {
        BsonValue clusterTime = command.get("$clusterTime");
        if (clusterTime != null
                && clusterTime.isDocument()
                && clusterTime.asDocument().isTimestamp("clusterTime")) {
            coordinator.clock().advanceTo(clusterTime.asDocument().getTimestamp("clusterTime"));
        }
    }

    private BsonDocument decorate(Result result) {
        BsonDocument reply =
                result.reply() instanceof RawBsonDocument ? BsonBridge.mutable(result.reply()) : result.reply();
        BsonTimestamp operationTime = result.operationTime();
        BsonTimestamp clusterTime = coordinator.clock().now();
        if (Long.compareUnsigned(operationTime.getValue(), clusterTime.getValue()) > 0) {
            clusterTime = operationTime;
        }
        reply.put("operationTime", operationTime);
        reply.put(
                "$clusterTime",
                new BsonDocument("clusterTime", clusterTime)
                        .append(
                                "signature",
                                new BsonDocument("hash", new BsonBinary(new byte[20]))
                                        .append("keyId", new BsonInt64(0))));
        return reply;
    }

    private BsonArray labels(int code, String name, BsonDocument command) {
        BsonArray labels = new BsonArray();
        boolean inTransaction = command.containsKey("autocommit");
        String lower = name.toLowerCase();
        boolean txnEnd = lower.equals("committransaction") || lower.equals("aborttransaction");
        if (inTransaction && !txnEnd && (code == 251 || code == 112 || code == 24 || RETRYABLE_CODES.contains(code))) {
            labels.add(new BsonString("TransientTransactionError"));
        } else if (command.containsKey("txnNumber") && RETRYABLE_CODES.contains(code)) {
            labels.add(new BsonString("RetryableWriteError"));
        }
        if (lower.equals("committransaction") && code == 251) {
            labels.add(new BsonString("TransientTransactionError"));
        }
        return labels;
    }

    private Result route(
            Channel channel, int connectionId, String db, String name, BsonDocument command, boolean legacy) {
        String lower = name.toLowerCase();
        return switch (lower) {
            case "hello", "ismaster" ->
                new Result(
                        HelloReply.build(coordinator, self, command, legacy || !lower.equals("hello"), connectionId),
                        coordinator.operationTime(self));
            case "buildinfo" -> new Result(ReplicaSetStatus.buildInfo(), coordinator.operationTime(self));
            case "replsetgetstatus" ->
                new Result(ReplicaSetStatus.replSetGetStatus(coordinator, self), coordinator.operationTime(self));
            case "replsetgetconfig" ->
                new Result(ReplicaSetStatus.replSetGetConfig(coordinator), coordinator.operationTime(self));
            case "replsetstepdown" -> stepDown(command);
            case "endsessions", "killsessions" -> endSessions(command.get(name));
            case "refreshsessions", "killallsessions" ->
                new Result(MemberStore.okReply(), coordinator.operationTime(self));
            case "committransaction" -> commitTransaction(command);
            case "aborttransaction" -> abortTransaction(command);
            case "configurefailpoint" -> {
                long entered = failPoints.timesEntered();
                failPoints.configure(command);
                // as mongod: the times entered so far, the base of a later waitForFailPoint's timesEntered
                yield new Result(
                        MemberStore.okReply().append("count", new BsonInt64(entered)), coordinator.operationTime(self));
            }
            case "waitforfailpoint" -> waitForFailPoint(command);
            case "getmore" -> getMore(channel, db, command);
            case "killcursors" -> killCursors(channel, db, command);
            case "getparameter" -> new Result(ReplicaSetStatus.getParameter(command), coordinator.operationTime(self));
            case "serverstatus" ->
                new Result(
                        ReplicaSetStatus.serverStatus(self.store().command(channel, db, command), coordinator, self),
                        coordinator.operationTime(self));
            default -> {
                if (lower.equals("aggregate") && isChangeStream(command)) {
                    yield changeStream(db, command);
                }
                if (WriteExecutor.isWrite(lower) || WriteExecutor.isAggregateWrite(lower, command)) {
                    yield write(channel, db, name, command);
                }
                yield read(channel, db, lower, command);
            }
        };
    }

    // ---- reads ----

    private Result read(Channel channel, String db, String lower, BsonDocument command) {
        checkReadable(lower, command);
        awaitCausalPoint(command);
        Transaction reader = command.containsKey("autocommit") ? openTransaction(command) : null;
        if (reader != null && reader.snapshot() == null) {
            Object owner = new Object();
            lock(owner);
            try {
                sessions.takeSnapshot(reader, self.applied());
            } finally {
                coordinator.writeLock().release(owner);
            }
        }
        if (!command.isString(command.getFirstKey())) {
            return new Result(self.store().command(channel, db, command), coordinator.operationTime(self));
        }
        String coll = command.getString(command.getFirstKey()).getValue();
        if (reader == null && isMajorityRead(command)) {
            return majorityRead(channel, db, lower, coll, command);
        }
        BsonDocument reply = sessions.readCommitted(() -> {
            // storage holds open transactions' writes: others' are served in their committed version,
            // and a transaction reads what was committed at its snapshot
            Map<BsonValue, BsonDocument> hidden = new LinkedHashMap<>();
            if (reader != null) {
                hidden.putAll(sessions.snapshotVersions(reader, db, coll));
            }
            sessions.uncommittedPreImages(self.index(), db, coll, reader).forEach(hidden::putIfAbsent);
            return readHiding(channel, db, lower, command, hidden);
        });
        return new Result(reply, coordinator.operationTimeAfterRead(self));
    }

    /**
     * A read at the majority commit point, as mongod serves {@code readConcern: "majority"}: it sees no write a majority
     * has not applied, and its operationTime is that point's time, not the member's newest (mongod's
     * operation_time_read_and_write_concern.js). A follower that takes a majority read's time as "every change up to
     * here is in the change stream" (the stream shows only majority-committed changes) would otherwise claim a write it
     * had not received. It runs while no write statement is between storage and oplog, where the pre-images of the
     * changes after the majority point could not hide it.
     */
    private Result majorityRead(Channel channel, String db, String lower, String coll, BsonDocument command) {
        BsonDocument reply = coordinator.betweenWriteStatements(
                self,
                () -> sessions.readCommitted(() -> readHiding(channel, db, lower, command, majorityHidden(db, coll))));
        // taken after the read: the point only moves forward, and the read hid nothing at or before it
        return new Result(reply, coordinator.majorityReadTime(self));
    }

    /**
     * What a majority read must not see as storage has it: the majority-committed version of each document changed
     * after the majority point, and the committed version of each an open transaction changed. Call inside
     * {@link SessionCatalog#readCommitted}.
     */
    private Map<BsonValue, BsonDocument> majorityHidden(String db, String coll) {
        Map<BsonValue, BsonDocument> hidden = new LinkedHashMap<>(coordinator.majorityPreImages(self, db, coll));
        sessions.uncommittedPreImages(self.index(), db, coll, null).forEach(hidden::putIfAbsent);
        return hidden;
    }

    /** Reads storage, serving the documents in {@code hidden} in the version given there (null: absent). */
    private BsonDocument readHiding(
            Channel channel, String db, String lower, BsonDocument command, Map<BsonValue, BsonDocument> hidden) {
        if (!hidden.isEmpty()) {
            Optional<BsonDocument> committed = CommittedView.read(self.store(), db, lower, command, hidden);
            if (committed.isPresent()) {
                return committed.get();
            }
        }
        return self.store().command(channel, db, command);
    }

    /**
     * updateLookup, as a server's lookup reads majority-committed data: never a write a majority has
     * not applied, nor an open transaction's write (the feeder lost an update when it saw an eviction's
     * delete that then aborted).
     */
    private Optional<BsonDocument> lookupCommitted(String db, String coll, BsonValue id) {
        // as a majority read: never a write still between storage and oplog, which no pre-image could hide
        return coordinator.betweenWriteStatements(
                self,
                () -> sessions.readCommitted(() -> {
                    Map<BsonValue, BsonDocument> hidden = majorityHidden(db, coll);
                    if (hidden.containsKey(id)) {
                        return Optional.ofNullable(hidden.get(id));
                    }
                    return self.store().findById(db, coll, id).map(d -> (BsonDocument) d);
                }));
    }

    /**
     * Documents other open transactions changed whose committed version matches a write's filter, and
     * for a transaction's write those whose version at its snapshot matches: storage no longer shows
     * them matching, yet the write must meet them (wait, or conflict).
     */
    private List<BsonValue> heldMatches(String db, String coll, BsonDocument filter, Transaction writer) {
        List<BsonValue> ids = new ArrayList<>();
        Map<BsonValue, BsonDocument> versions = new LinkedHashMap<>();
        if (writer != null) {
            versions.putAll(sessions.snapshotVersions(writer, db, coll));
        }
        sessions.uncommittedPreImages(self.index(), db, coll, writer).forEach(versions::putIfAbsent);
        versions.forEach((id, version) -> {
            if (version != null && CommittedView.matches(version, filter)) {
                ids.add(id);
            }
        });
        return ids;
    }

    private static boolean isMajorityRead(BsonDocument command) {
        BsonValue readConcern = command.get("readConcern");
        return readConcern != null
                && readConcern.isDocument()
                && "majority"
                        .equals(readConcern
                                .asDocument()
                                .getString("level", new BsonString("local"))
                                .getValue());
    }

    private void checkReadable(String lower, BsonDocument command) {
        if (!coordinator.isPrimary(self) && READS.contains(lower) && !secondaryOk(command)) {
            throw new ReplicationException(13435, "NotPrimaryNoSecondaryOk", "not primary and secondaryOk=false");
        }
    }

    private static boolean secondaryOk(BsonDocument command) {
        BsonValue pref = command.get("$readPreference");
        return pref != null
                && pref.isDocument()
                && !"primary"
                        .equals(pref.asDocument()
                                .getString("mode", new BsonString("primary"))
                                .getValue());
    }

    private void awaitCausalPoint(BsonDocument command) {
        BsonValue readConcern = command.get("readConcern");
        if (readConcern == null
                || !readConcern.isDocument()
                || !readConcern.asDocument().isTimestamp("afterClusterTime")) {
            return;
        }
        BsonTimestamp after = readConcern.asDocument().getTimestamp("afterClusterTime");
        // as a server: a time beyond the member's clock (after gossip) is none this set issued or heard of
        BsonTimestamp now = coordinator.clock().now();
        if (Long.compareUnsigned(after.getValue(), now.getValue()) > 0) {
            throw new ReplicationException(
                    72,
                    "InvalidOptions",
                    "readConcern afterClusterTime value must not be greater"
                            + " than the current clusterTime. Requested clusterTime: " + after
                            + "; current clusterTime: " + now);
        }
        Duration timeout = command.containsKey("maxTimeMS")
                        && command.get("maxTimeMS").isNumber()
                        && command.getNumber("maxTimeMS").longValue() > 0
                ? Duration.ofMillis(command.getNumber("maxTimeMS").longValue())
                : DEFAULT_WAIT;
        // a majority read waits until its snapshot holds the time, as mongod's does: having applied it is not enough
        boolean majority = isMajorityRead(command);
        if (!(majority
                ? coordinator.awaitMajorityApplied(self, after, timeout)
                : coordinator.awaitApplied(self, after, timeout))) {
            throw new ReplicationException(
                    50,
                    "MaxTimeMSExpired",
                    "operation exceeded time limit waiting for afterClusterTime " + after
                            + (majority ? " to be majority-committed" : "") + " on " + self.host());
        }
    }

    // ---- writes ----

    private Result write(Channel channel, String db, String name, BsonDocument command) {
        BsonDocument lsid = command.isDocument("lsid") ? command.getDocument("lsid") : null;
        Long txnNumber =
                command.isNumber("txnNumber") ? command.getNumber("txnNumber").longValue() : null;
        requirePrimary();
        if (command.containsKey("autocommit")) {
            return transactionalWrite(channel, db, name, command);
        }
        boolean retryable = lsid != null && txnNumber != null;
        coordinator.durability().refuseIfFailed();
        Object owner = new Object();
        lock(owner);
        OplogPosition[] last = {self.applied()};
        BsonDocument reply;
        Optional<SessionCatalog.RecordedWrite> recorded;
        try {
            requirePrimary();
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
            awaitWriteConcern(command, recorded.get().position(), answer);
            return new Result(answer, recorded.get().position().clusterTime());
        }
        try {
            WriteExecutor executor = new WriteExecutor(
                    self.store(),
                    channel,
                    change -> {
                        coordinator.passBeforeOplog(self);
                        last[0] = coordinator.commit(self, List.of(change), lsid, txnNumber, false);
                        sessions.committed(last[0], List.of(change));
                    },
                    (database, coll, ids) -> waitOutTransactions(owner, database, coll, ids),
                    (database, coll, filter) -> heldMatches(database, coll, filter, null),
                    statement -> {
                        coordinator.passDocumentHold(self);
                        if (self.isStopping()) {
                            // as mongod at shutdown: a multi-document statement stops between documents (those before
                            // stay written), so the stop never waits for the rest of a minutes-long updateMany
                            throw new ReplicationException(
                                    11600, "InterruptedAtShutdown", "interrupted at shutdown between two documents");
                        }
                        // in flight (what majority reads wait for) only once it may change storage: a step waiting
                        // for a long read to leave the visibility lock made every majority read wait with it
                        return sessions.snapshotsOpen()
                                ? sessions.changeUncommitted(() -> coordinator.writing(self, statement))
                                : coordinator.writing(self, statement);
                    });
            reply = executor.execute(db, name, command);
            if (retryable && WriteExecutor.isOk(reply)) {
                sessions.record(lsid, txnNumber, name, reply, last[0]);
            }
        } finally {
            coordinator.writeLock().release(owner);
        }
        BsonDocument mutableReply = BsonBridge.mutable(reply);
        awaitWriteConcern(command, last[0], mutableReply);
        return new Result(mutableReply, last[0].clusterTime());
    }

    private void lock(Object owner) {
        if (!coordinator.writeLock().acquire(owner, WRITE_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(
                    24, "LockTimeout", "could not take the write lock within " + WRITE_LOCK_WAIT.toSeconds() + "s");
        }
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
                        WRITE_LOCK_WAIT.toMillis(),
                        TimeUnit.MILLISECONDS);
        lock(owner);
        if (!ended) {
            throw new ReplicationException(
                    50,
                    "MaxTimeMSExpired",
                    "waited " + WRITE_LOCK_WAIT.toSeconds() + "s for a transaction holding a document of " + db + "."
                            + coll + " to commit or abort");
        }
        requirePrimary();
        return false;
    }

    /** Aborts a transaction, undoing its writes on the member it ran on, and wakes writers waiting for it. */
    void abort(Transaction t) {
        Object owner = new Object();
        coordinator.writeLock().acquire(owner, WRITE_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            sessions.abort(t, coordinator.members().get(t.primaryIndex()).store());
        } finally {
            coordinator.writeLock().release(owner);
        }
        coordinator.progress().signalAll();
    }

    private void requirePrimary() {
        if (!coordinator.isPrimary(self)) {
            throw new ReplicationException(10107, "NotWritablePrimary", "not primary");
        }
    }

    private void awaitWriteConcern(BsonDocument command, OplogPosition position, BsonDocument reply) {
        coordinator.durability().awaitDurable(); // acknowledged only once on disk (j: true)
        BsonValue wc = command.get("writeConcern");
        BsonValue w = wc != null && wc.isDocument() ? wc.asDocument().get("w") : null;
        Duration timeout = wc != null
                        && wc.isDocument()
                        && wc.asDocument().isNumber("wtimeout")
                        && wc.asDocument().getNumber("wtimeout").longValue() > 0
                ? Duration.ofMillis(wc.asDocument().getNumber("wtimeout").longValue())
                : Duration.ofDays(1);
        boolean satisfied;
        if (w == null) {
            satisfied = !majorityByDefault || coordinator.awaitMajority(self, position, timeout);
        } else if (w.isString() && "majority".equals(w.asString().getValue())) {
            satisfied = coordinator.awaitMajority(self, position, timeout);
        } else if (w.isNumber() && w.asNumber().intValue() > 1) {
            int count = w.asNumber().intValue();
            if (count > coordinator.members().size()) {
                // as mongod: the write stands, and its reply says the write concern cannot be met (ok 1)
                reply.put(
                        "writeConcernError",
                        new BsonDocument("code", new BsonInt32(100))
                                .append("codeName", new BsonString("UnsatisfiableWriteConcern"))
                                .append("errmsg", new BsonString("Not enough data-bearing nodes"))
                                .append("errInfo", new BsonDocument("writeConcern", clientSupplied(wc.asDocument()))));
                return;
            }
            satisfied = coordinator.awaitAcknowledged(self, position, count, timeout);
        } else if (w.isString()) {
            // as mongod: the set defines no tags (settings.getLastErrorModes), so the write stands and its reply says
            // so
            reply.put(
                    "writeConcernError",
                    new BsonDocument("code", new BsonInt32(79))
                            .append("codeName", new BsonString("UnknownReplWriteConcern"))
                            .append(
                                    "errmsg",
                                    new BsonString("No write concern mode named '"
                                            + w.asString().getValue() + "' found in replica set configuration"))
                            .append("errInfo", new BsonDocument("writeConcern", clientSupplied(wc.asDocument()))));
            return;
        } else {
            satisfied = true;
        }
        if (!satisfied) {
            reply.put(
                    "writeConcernError",
                    new BsonDocument("code", new BsonInt32(64))
                            .append("codeName", new BsonString("WriteConcernFailed"))
                            .append("errmsg", new BsonString("waiting for replication timed out"))
                            .append(
                                    "errInfo",
                                    new BsonDocument("wtimeout", BsonBoolean.TRUE)
                                            .append(
                                                    "writeConcern",
                                                    wc != null && wc.isDocument()
                                                            ? clientSupplied(wc.asDocument())
                                                            : new BsonDocument("w", new BsonString("majority"))
                                                                    .append("wtimeout", new BsonInt32(0))
                                                                    .append(
                                                                            "provenance",
                                                                            new BsonString("implicitDefault")))));
        }
    }

    /** The write concern as mongod echoes it in {@code errInfo}: w, wtimeout (0 when absent), j if given, its provenance. */
    private static BsonDocument clientSupplied(BsonDocument wc) {
        BsonDocument echoed = new BsonDocument("w", wc.containsKey("w") ? wc.get("w") : new BsonInt32(1))
                .append(
                        "wtimeout",
                        wc.isNumber("wtimeout")
                                ? new BsonInt32(wc.getNumber("wtimeout").intValue())
                                : new BsonInt32(0));
        if (wc.containsKey("j")) {
            echoed.append("j", wc.get("j"));
        }
        return echoed.append("provenance", new BsonString("clientSupplied"));
    }

    // ---- transactions ----

    private Transaction openTransaction(BsonDocument command) {
        BsonDocument lsid = command.isDocument("lsid") ? command.getDocument("lsid") : null;
        if (lsid == null || !command.isNumber("txnNumber")) {
            throw new ReplicationException(50768, "Location50768", "a transaction statement needs lsid and txnNumber");
        }
        long txnNumber = command.getNumber("txnNumber").longValue();
        if (command.getBoolean("startTransaction", BsonBoolean.FALSE).getValue()) {
            requirePrimary();
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
     * for the conflict kinds ({@link #labels}). Writing a document another open transaction holds, or one
     * committed after this transaction's snapshot, is such a conflict (WriteConflict).
     */
    private Result transactionalWrite(Channel channel, String db, String name, BsonDocument command) {
        Transaction t = openTransaction(command);
        Object owner = new Object();
        boolean failed = true;
        try {
            lock(owner);
            if (t.state() != Transaction.State.IN_PROGRESS) {
                throw new ReplicationException(
                        251, "NoSuchTransaction", "Transaction " + t.txnNumber() + " has been aborted.");
            }
            requirePrimary();
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
                        coordinator.passDocumentHold(self);
                        return sessions.changeUncommitted(statement);
                    });
            // each document's storage write and its staging are one step for committed readers, who wait for one
            // document, never a whole statement (a 1,000-document copy-up held every read of the member for 30 s
            // on the on-disk engine); a command without document steps (DDL) is one step whole
            BsonDocument reply = WriteExecutor.writesDocumentByDocument(name)
                    ? executor.execute(db, name, command)
                    : sessions.changeUncommitted(() -> executor.execute(db, name, command));
            failed = !WriteExecutor.isOk(reply) || reply.containsKey("writeErrors");
            return new Result(reply, coordinator.operationTime(self));
        } finally {
            coordinator.writeLock().release(owner);
            if (failed) {
                abort(t);
            }
        }
    }

    private Result commitTransaction(BsonDocument command) {
        BsonDocument lsid = command.getDocument("lsid");
        long txnNumber = command.getNumber("txnNumber").longValue();
        Transaction t = sessions.transaction(lsid, txnNumber)
                .orElseThrow(() -> new ReplicationException(
                        251, "NoSuchTransaction", "Transaction with txnNumber " + txnNumber + " does not exist."));
        if (t.state() == Transaction.State.ABORTED) {
            throw new ReplicationException(251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
        }
        if (t.state() == Transaction.State.COMMITTED) {
            OplogPosition committed = self.applied();
            BsonDocument reply = MemberStore.okReply();
            awaitWriteConcern(command, committed, reply);
            return new Result(reply, committed.clusterTime());
        }
        requirePrimary();
        coordinator.durability().refuseIfFailed();
        Object owner = new Object();
        lock(owner);
        OplogPosition position;
        try {
            if (t.state() != Transaction.State.IN_PROGRESS || !coordinator.isPrimary(self)) {
                throw new ReplicationException(
                        251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
            }
            List<Change> changes = t.changes();
            position = sessions.commit(t, () -> coordinator.commit(self, changes, lsid, txnNumber, true));
        } finally {
            coordinator.writeLock().release(owner);
        }
        coordinator.progress().signalAll();
        BsonDocument reply = MemberStore.okReply();
        awaitWriteConcern(command, position, reply);
        return new Result(reply, position.clusterTime());
    }

    /** Ending a session aborts its open transaction, as on a server (its writes would otherwise stay held until it expires). */
    private Result endSessions(BsonValue ended) {
        if (ended != null && ended.isArray()) {
            for (BsonValue lsid : ended.asArray()) {
                if (lsid.isDocument() && lsid.asDocument().containsKey("id")) {
                    sessions.openTransaction(lsid.asDocument()).ifPresent(this::abort);
                }
            }
        }
        return new Result(MemberStore.okReply(), coordinator.operationTime(self));
    }

    private Result abortTransaction(BsonDocument command) {
        BsonDocument lsid = command.getDocument("lsid");
        long txnNumber = command.getNumber("txnNumber").longValue();
        Transaction t = sessions.transaction(lsid, txnNumber)
                .orElseThrow(() -> new ReplicationException(
                        251, "NoSuchTransaction", "Transaction with txnNumber " + txnNumber + " does not exist."));
        if (t.state() == Transaction.State.COMMITTED) {
            throw new ReplicationException(
                    256, "TransactionCommitted", "Transaction " + txnNumber + " has been committed.");
        }
        if (t.state() != Transaction.State.IN_PROGRESS) {
            throw new ReplicationException(251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
        }
        abort(t);
        return new Result(MemberStore.okReply(), coordinator.operationTime(self));
    }

    // ---- change streams and cursors ----

    private static boolean isChangeStream(BsonDocument command) {
        return ChangeStreamCursors.isChangeStream(command);
    }

    private Result changeStream(String db, BsonDocument command) {
        checkReadable("aggregate", command);
        awaitCausalPoint(command);
        return new Result(changeStreams.open(db, command), coordinator.operationTime(self));
    }

    private Result getMore(Channel channel, String db, BsonDocument command) {
        Optional<BsonDocument> reply = changeStreams.getMore(command);
        return new Result(
                reply.orElseGet(() -> self.store().command(channel, db, command)), coordinator.operationTime(self));
    }

    private Result killCursors(Channel channel, String db, BsonDocument command) {
        BsonArray killed = new BsonArray();
        BsonArray others = new BsonArray();
        for (BsonValue idValue : command.getArray("cursors", new BsonArray())) {
            long id = idValue.asNumber().longValue();
            (changeStreams.kill(id) ? killed : others).add(new BsonInt64(id));
        }
        BsonArray notFound = new BsonArray();
        if (!others.isEmpty()) {
            BsonDocument reply = self.store()
                    .command(
                            channel,
                            db,
                            new BsonDocument("killCursors", command.get("killCursors")).append("cursors", others));
            killed.addAll(reply.getArray("cursorsKilled", new BsonArray()));
            notFound.addAll(reply.getArray("cursorsNotFound", new BsonArray()));
        }
        BsonDocument reply = new BsonDocument("cursorsKilled", killed)
                .append("cursorsNotFound", notFound)
                .append("cursorsAlive", new BsonArray())
                .append("cursorsUnknown", new BsonArray())
                .append("ok", new BsonDouble(1));
        return new Result(reply, coordinator.operationTime(self));
    }

    // ---- replica-set commands ----

    private Result stepDown(BsonDocument command) {
        requirePrimary();
        long catchUp = command.getNumber("secondaryCatchUpPeriodSecs", new BsonInt32(10))
                .longValue();
        coordinator.stepDown(Duration.ofSeconds(catchUp));
        return new Result(MemberStore.okReply(), coordinator.operationTime(self));
    }
}
