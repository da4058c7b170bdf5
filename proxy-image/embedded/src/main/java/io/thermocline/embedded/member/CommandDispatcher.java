package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.thermocline.embedded.changestream.ChangeStreamCursor;
import io.thermocline.embedded.changestream.ChangeStreamOptions;
import io.thermocline.embedded.changestream.ChangeStreamScope;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.MemberRole;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.session.Transaction;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.write.WriteExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * Answers one member's commands: replica-set, session, transaction and change-stream commands
 * here; writes through the oplog; everything else on the member's storage engine. Every reply
 * carries operationTime and $clusterTime.
 */
final class CommandDispatcher {
    private static final Set<String> READS = Set.of("find", "aggregate", "count", "distinct", "listcollections",
        "listindexes", "dbstats", "collstats", "mapreduce");
    private static final Set<Integer> RETRYABLE_CODES = Set.of(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436);
    /** Errors after which drivers re-check the server; they carry the member's topologyVersion. */
    private static final Set<Integer> STATE_CHANGE_CODES = Set.of(91, 189, 10107, 11600, 11602, 13435, 13436);
    private static final Duration DEFAULT_WAIT = Duration.ofSeconds(60);
    private static final Duration WRITE_LOCK_WAIT = Duration.ofSeconds(30);
    private static final Duration TXN_LOCK_WAIT = Duration.ofMillis(500);

    /** Thrown to make the connection close without a reply (failCommand closeConnection). */
    static final class CloseConnection extends RuntimeException {
        CloseConnection() {
            super("closeConnection fail point", null, false, false);
        }
    }

    private record Result(BsonDocument reply, BsonTimestamp operationTime) {
    }

    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final SessionCatalog sessions;
    private final FailPoints failPoints = new FailPoints();
    private final Map<Long, ChangeStreamCursor> cursors = new ConcurrentHashMap<>();
    private final boolean majorityByDefault;

    CommandDispatcher(ReplicationCoordinator coordinator, MemberState self, SessionCatalog sessions, boolean majorityByDefault) {
        this.coordinator = coordinator;
        this.self = self;
        this.sessions = sessions;
        this.majorityByDefault = majorityByDefault;
    }

    void closeCursors() {
        cursors.values().forEach(ChangeStreamCursor::close);
        cursors.clear();
    }

    BsonDocument dispatch(Channel channel, int connectionId, String db, BsonDocument command, boolean legacy) {
        String name = command.isEmpty() ? "" : command.getFirstKey();
        try {
            gossip(command);
            Optional<FailPoints.FailCommand> fail = failPoints.trigger(name);
            if (fail.isPresent()) {
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
            return decorate(new Result(MemberStore.errorReply(1, "InternalError", name + " failed: " + e), coordinator.operationTime(self)));
        }
    }

    private Result applyFailPoint(FailPoints.FailCommand fail, Channel channel, String name, BsonDocument command) {
        if (fail.blockMillis() > 0) {
            long until = System.currentTimeMillis() + fail.blockMillis();
            coordinator.topology().await(() -> !channel.isActive() || System.currentTimeMillis() >= until,
                fail.blockMillis(), TimeUnit.MILLISECONDS);
            if (!channel.isActive() || !self.alive()) {
                throw new CloseConnection();
            }
        }
        if (fail.closeConnection()) {
            throw new CloseConnection();
        }
        if (fail.errorCode() != 0) {
            BsonDocument error = MemberStore.errorReply(fail.errorCode(), "FailPoint", "Failing command via 'failCommand' failpoint");
            BsonArray labels = fail.errorLabels().isEmpty() ? labels(fail.errorCode(), name, command) : fail.errorLabels();
            if (!labels.isEmpty()) {
                error.append("errorLabels", labels);
            }
            return new Result(error, coordinator.operationTime(self));
        }
        return null;
    }

    private void gossip(BsonDocument command) {
        BsonValue clusterTime = command.get("$clusterTime");
        if (clusterTime != null && clusterTime.isDocument() && clusterTime.asDocument().isTimestamp("clusterTime")) {
            coordinator.clock().advanceTo(clusterTime.asDocument().getTimestamp("clusterTime"));
        }
    }

    private BsonDocument decorate(Result result) {
        BsonDocument reply = result.reply() instanceof org.bson.RawBsonDocument ? BsonBridge.mutable(result.reply()) : result.reply();
        BsonTimestamp operationTime = result.operationTime();
        BsonTimestamp clusterTime = coordinator.clock().now();
        if (Long.compareUnsigned(operationTime.getValue(), clusterTime.getValue()) > 0) {
            clusterTime = operationTime;
        }
        reply.put("operationTime", operationTime);
        reply.put("$clusterTime", new BsonDocument("clusterTime", clusterTime)
            .append("signature", new BsonDocument("hash", new BsonBinary(new byte[20])).append("keyId", new BsonInt64(0))));
        return reply;
    }

    private BsonArray labels(int code, String name, BsonDocument command) {
        BsonArray labels = new BsonArray();
        boolean inTransaction = command.containsKey("autocommit");
        String lower = name.toLowerCase();
        boolean txnEnd = lower.equals("committransaction") || lower.equals("aborttransaction");
        if (inTransaction && !txnEnd && (code == 251 || code == 112 || RETRYABLE_CODES.contains(code))) {
            labels.add(new BsonString("TransientTransactionError"));
        } else if (command.containsKey("txnNumber") && RETRYABLE_CODES.contains(code)) {
            labels.add(new BsonString("RetryableWriteError"));
        }
        if (lower.equals("committransaction") && code == 251) {
            labels.add(new BsonString("TransientTransactionError"));
        }
        return labels;
    }

    private Result route(Channel channel, int connectionId, String db, String name, BsonDocument command, boolean legacy) {
        String lower = name.toLowerCase();
        return switch (lower) {
            case "hello", "ismaster" -> new Result(HelloReply.build(coordinator, self, command,
                legacy || !lower.equals("hello"), connectionId), coordinator.operationTime(self));
            case "buildinfo" -> new Result(buildInfo(), coordinator.operationTime(self));
            case "replsetgetstatus" -> new Result(replSetGetStatus(), coordinator.operationTime(self));
            case "replsetgetconfig" -> new Result(replSetGetConfig(), coordinator.operationTime(self));
            case "replsetstepdown" -> stepDown(command);
            case "endsessions", "killsessions", "refreshsessions", "killallsessions" ->
                new Result(MemberStore.okReply(), coordinator.operationTime(self));
            case "committransaction" -> commitTransaction(command);
            case "aborttransaction" -> abortTransaction(command);
            case "configurefailpoint" -> {
                failPoints.configure(command);
                yield new Result(MemberStore.okReply(), coordinator.operationTime(self));
            }
            case "getmore" -> getMore(channel, db, command);
            case "killcursors" -> killCursors(channel, db, command);
            case "getparameter" -> new Result(getParameter(command), coordinator.operationTime(self));
            default -> {
                if (lower.equals("aggregate") && isChangeStream(command)) {
                    yield changeStream(db, command);
                }
                if (WriteExecutor.isWrite(lower)) {
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
        if (command.containsKey("autocommit")) {
            openTransaction(command);
        }
        BsonDocument reply = self.store().command(channel, db, command);
        return new Result(reply, coordinator.operationTime(self));
    }

    private void checkReadable(String lower, BsonDocument command) {
        if (!coordinator.isPrimary(self) && READS.contains(lower) && !secondaryOk(command)) {
            throw new ReplicationException(13435, "NotPrimaryNoSecondaryOk", "not primary and secondaryOk=false");
        }
    }

    private static boolean secondaryOk(BsonDocument command) {
        BsonValue pref = command.get("$readPreference");
        return pref != null && pref.isDocument()
            && !"primary".equals(pref.asDocument().getString("mode", new BsonString("primary")).getValue());
    }

    private void awaitCausalPoint(BsonDocument command) {
        BsonValue readConcern = command.get("readConcern");
        if (readConcern == null || !readConcern.isDocument() || !readConcern.asDocument().isTimestamp("afterClusterTime")) {
            return;
        }
        BsonTimestamp after = readConcern.asDocument().getTimestamp("afterClusterTime");
        Duration timeout = command.containsKey("maxTimeMS") && command.get("maxTimeMS").isNumber()
            && command.getNumber("maxTimeMS").longValue() > 0
            ? Duration.ofMillis(command.getNumber("maxTimeMS").longValue()) : DEFAULT_WAIT;
        if (!coordinator.awaitApplied(self, after, timeout)) {
            throw new ReplicationException(50, "MaxTimeMSExpired",
                "operation exceeded time limit waiting for afterClusterTime " + after + " on " + self.host());
        }
    }

    // ---- writes ----

    private Result write(Channel channel, String db, String name, BsonDocument command) {
        BsonDocument lsid = command.isDocument("lsid") ? command.getDocument("lsid") : null;
        Long txnNumber = command.isNumber("txnNumber") ? command.getNumber("txnNumber").longValue() : null;
        requirePrimary();
        if (command.containsKey("autocommit")) {
            return transactionalWrite(channel, db, name, command);
        }
        boolean retryable = lsid != null && txnNumber != null;
        if (retryable) {
            Optional<SessionCatalog.RecordedWrite> recorded = sessions.recorded(lsid, txnNumber);
            if (recorded.isPresent()) {
                BsonDocument reply = BsonBridge.mutable(recorded.get().reply());
                awaitWriteConcern(command, recorded.get().position(), reply);
                return new Result(reply, recorded.get().position().clusterTime());
            }
        }
        Object owner = new Object();
        if (!coordinator.writeLock().acquire(owner, WRITE_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(24, "LockTimeout", "could not take the write lock within " + WRITE_LOCK_WAIT.toSeconds()
                + "s: a transaction holds it; commit or abort it");
        }
        OplogPosition[] last = {self.applied()};
        BsonDocument reply;
        try {
            requirePrimary();
            WriteExecutor executor = new WriteExecutor(self.store(), channel,
                change -> last[0] = coordinator.commit(self, List.of(change), lsid, txnNumber, false));
            reply = executor.execute(db, name, command);
            if (retryable && WriteExecutor.isOk(reply)) {
                sessions.record(lsid, txnNumber, reply, last[0]);
            }
        } finally {
            coordinator.writeLock().release(owner);
        }
        BsonDocument mutableReply = BsonBridge.mutable(reply);
        awaitWriteConcern(command, last[0], mutableReply);
        return new Result(mutableReply, last[0].clusterTime());
    }

    private void requirePrimary() {
        if (!coordinator.isPrimary(self)) {
            throw new ReplicationException(10107, "NotWritablePrimary", "not primary");
        }
    }

    private void awaitWriteConcern(BsonDocument command, OplogPosition position, BsonDocument reply) {
        BsonValue wc = command.get("writeConcern");
        BsonValue w = wc != null && wc.isDocument() ? wc.asDocument().get("w") : null;
        Duration timeout = wc != null && wc.isDocument() && wc.asDocument().isNumber("wtimeout")
            && wc.asDocument().getNumber("wtimeout").longValue() > 0
            ? Duration.ofMillis(wc.asDocument().getNumber("wtimeout").longValue()) : Duration.ofDays(1);
        boolean satisfied;
        if (w == null) {
            satisfied = !majorityByDefault || coordinator.awaitMajority(position, timeout);
        } else if (w.isString() && "majority".equals(w.asString().getValue())) {
            satisfied = coordinator.awaitMajority(position, timeout);
        } else if (w.isNumber() && w.asNumber().intValue() > 1) {
            int count = w.asNumber().intValue();
            if (count > coordinator.members().size()) {
                throw new ReplicationException(100, "UnsatisfiableWriteConcern", "Not enough data-bearing nodes for w:" + count);
            }
            satisfied = coordinator.awaitAcknowledged(position, count, timeout);
        } else {
            satisfied = true;
        }
        if (!satisfied) {
            reply.put("writeConcernError", new BsonDocument("code", new BsonInt32(64))
                .append("codeName", new BsonString("WriteConcernFailed"))
                .append("errmsg", new BsonString("waiting for replication timed out"))
                .append("errInfo", new BsonDocument("wtimeout", BsonBoolean.TRUE)));
        }
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
            return sessions.begin(lsid, txnNumber, self.index());
        }
        Transaction t = sessions.transaction(lsid, txnNumber)
            .filter(tx -> tx.state() == Transaction.State.IN_PROGRESS)
            .orElseThrow(() -> new ReplicationException(251, "NoSuchTransaction",
                "Transaction with txnNumber " + txnNumber + " has been aborted or does not exist."));
        if (t.primaryIndex() != self.index() || !coordinator.isPrimary(self)) {
            throw new ReplicationException(251, "NoSuchTransaction", "the transaction's primary stepped down");
        }
        return t;
    }

    private Result transactionalWrite(Channel channel, String db, String name, BsonDocument command) {
        Transaction t = openTransaction(command);
        if (!coordinator.writeLock().acquire(t, TXN_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(112, "WriteConflict",
                "Write conflict during plan execution and yielding is disabled.");
        }
        if (t.state() != Transaction.State.IN_PROGRESS) {
            coordinator.writeLock().releaseAll(t);
            throw new ReplicationException(251, "NoSuchTransaction", "Transaction " + t.txnNumber() + " has been aborted.");
        }
        BsonDocument reply = new WriteExecutor(self.store(), channel, t::stage).execute(db, name, command);
        return new Result(reply, coordinator.operationTime(self));
    }

    private Result commitTransaction(BsonDocument command) {
        BsonDocument lsid = command.getDocument("lsid");
        long txnNumber = command.getNumber("txnNumber").longValue();
        Transaction t = sessions.transaction(lsid, txnNumber).orElseThrow(() -> new ReplicationException(251,
            "NoSuchTransaction", "Transaction with txnNumber " + txnNumber + " does not exist."));
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
        if (!coordinator.writeLock().acquire(t, WRITE_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(24, "LockTimeout", "could not take the write lock to commit");
        }
        OplogPosition position;
        try {
            List<Change> changes = t.changes();
            position = coordinator.commit(self, changes, lsid, txnNumber, true);
            sessions.markCommitted(t);
        } finally {
            coordinator.writeLock().releaseAll(t);
        }
        BsonDocument reply = MemberStore.okReply();
        awaitWriteConcern(command, position, reply);
        return new Result(reply, position.clusterTime());
    }

    private Result abortTransaction(BsonDocument command) {
        BsonDocument lsid = command.getDocument("lsid");
        long txnNumber = command.getNumber("txnNumber").longValue();
        Transaction t = sessions.transaction(lsid, txnNumber).orElseThrow(() -> new ReplicationException(251,
            "NoSuchTransaction", "Transaction with txnNumber " + txnNumber + " does not exist."));
        if (t.state() == Transaction.State.COMMITTED) {
            throw new ReplicationException(256, "TransactionCommitted", "Transaction " + txnNumber + " has been committed.");
        }
        if (!sessions.abort(t, coordinator.members().get(t.primaryIndex()).store())) {
            throw new ReplicationException(251, "NoSuchTransaction", "Transaction " + txnNumber + " has been aborted.");
        }
        coordinator.writeLock().releaseAll(t);
        return new Result(MemberStore.okReply(), coordinator.operationTime(self));
    }

    // ---- change streams and cursors ----

    private static boolean isChangeStream(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return pipeline != null && pipeline.isArray() && !pipeline.asArray().isEmpty()
            && pipeline.asArray().get(0).isDocument() && pipeline.asArray().get(0).asDocument().containsKey("$changeStream");
    }

    private Result changeStream(String db, BsonDocument command) {
        checkReadable("aggregate", command);
        awaitCausalPoint(command);
        BsonArray pipeline = command.getArray("pipeline");
        BsonDocument spec = pipeline.get(0).asDocument().getDocument("$changeStream");
        ChangeStreamOptions options = ChangeStreamOptions.parse(spec);
        ChangeStreamScope scope;
        BsonValue target = command.get("aggregate");
        if (target.isString()) {
            scope = new ChangeStreamScope.Collection(db, target.asString().getValue());
        } else if (options.allChangesForCluster()) {
            if (!"admin".equals(db)) {
                throw new ReplicationException(40573, "Location40573",
                    "$changeStream may only be run with allChangesForCluster on the admin database");
            }
            scope = new ChangeStreamScope.Cluster();
        } else {
            if ("admin".equals(db) || "config".equals(db) || "local".equals(db)) {
                throw new ReplicationException(73, "InvalidNamespace", "$changeStream may not be opened on the internal " + db + " database");
            }
            scope = new ChangeStreamScope.Database(db);
        }
        List<BsonDocument> rest = new ArrayList<>();
        for (int i = 1; i < pipeline.size(); i++) {
            rest.add(pipeline.get(i).asDocument());
        }
        long id = ThreadLocalRandom.current().nextLong(1L << 40, Long.MAX_VALUE);
        ChangeStreamCursor cursor = new ChangeStreamCursor(id, scope, options, rest, self, coordinator);
        int batchSize = command.getDocument("cursor", new BsonDocument()).getNumber("batchSize", new BsonInt32(101)).intValue();
        ChangeStreamCursor.Batch batch = cursor.next(batchSize, 0);
        if (!batch.exhausted()) {
            cursors.put(id, cursor);
        }
        return new Result(cursorReply("firstBatch", batch, batch.exhausted() ? 0 : id, cursor.namespace()),
            coordinator.operationTime(self));
    }

    private static BsonDocument cursorReply(String batchName, ChangeStreamCursor.Batch batch, long id, String ns) {
        BsonArray events = new BsonArray(new ArrayList<>(batch.events()));
        return new BsonDocument("cursor", new BsonDocument(batchName, events)
            .append("postBatchResumeToken", batch.postBatchResumeToken())
            .append("id", new BsonInt64(id))
            .append("ns", new BsonString(ns)))
            .append("ok", new BsonDouble(1));
    }

    private Result getMore(Channel channel, String db, BsonDocument command) {
        long id = command.getNumber("getMore").longValue();
        ChangeStreamCursor cursor = cursors.get(id);
        if (cursor == null) {
            return new Result(self.store().command(channel, db, command), coordinator.operationTime(self));
        }
        int batchSize = command.getNumber("batchSize", new BsonInt32(101)).intValue();
        long maxAwait = command.getNumber("maxTimeMS", new BsonInt64(cursor.maxAwaitDefaultMillis())).longValue();
        ChangeStreamCursor.Batch batch = cursor.next(batchSize, maxAwait);
        if (batch.exhausted()) {
            cursors.remove(id);
        }
        return new Result(cursorReply("nextBatch", batch, batch.exhausted() ? 0 : id, cursor.namespace()),
            coordinator.operationTime(self));
    }

    private Result killCursors(Channel channel, String db, BsonDocument command) {
        BsonArray killed = new BsonArray();
        BsonArray others = new BsonArray();
        for (BsonValue idValue : command.getArray("cursors", new BsonArray())) {
            ChangeStreamCursor cursor = cursors.remove(idValue.asNumber().longValue());
            if (cursor != null) {
                cursor.close();
                killed.add(new BsonInt64(idValue.asNumber().longValue()));
            } else {
                others.add(new BsonInt64(idValue.asNumber().longValue()));
            }
        }
        BsonArray notFound = new BsonArray();
        if (!others.isEmpty()) {
            BsonDocument reply = self.store().command(channel, db, new BsonDocument("killCursors", command.get("killCursors"))
                .append("cursors", others));
            killed.addAll(reply.getArray("cursorsKilled", new BsonArray()));
            notFound.addAll(reply.getArray("cursorsNotFound", new BsonArray()));
        }
        BsonDocument reply = new BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound)
            .append("cursorsAlive", new BsonArray()).append("cursorsUnknown", new BsonArray()).append("ok", new BsonDouble(1));
        return new Result(reply, coordinator.operationTime(self));
    }

    // ---- replica-set commands ----

    private Result stepDown(BsonDocument command) {
        requirePrimary();
        long catchUp = command.getNumber("secondaryCatchUpPeriodSecs", new BsonInt32(10)).longValue();
        coordinator.stepDown(Duration.ofSeconds(catchUp));
        return new Result(MemberStore.okReply(), coordinator.operationTime(self));
    }

    private BsonDocument replSetGetStatus() {
        BsonArray members = new BsonArray();
        for (MemberState m : coordinator.members()) {
            MemberRole role = coordinator.role(m);
            BsonTimestamp ts = m.applied().clusterTime();
            BsonDocument member = new BsonDocument("_id", new BsonInt32(m.index()))
                .append("name", new BsonString(m.host()))
                .append("health", new BsonDouble(m.alive() ? 1 : 0))
                .append("state", new BsonInt32(role.code()))
                .append("stateStr", new BsonString(role.label()))
                .append("optime", new BsonDocument("ts", ts).append("t", new BsonInt64(coordinator.term())))
                .append("optimeDate", new BsonDateTime(ts.getTime() * 1000L));
            if (m == self) {
                member.append("self", BsonBoolean.TRUE);
            }
            members.add(member);
        }
        BsonTimestamp majority = coordinator.majorityCommitted().clusterTime();
        return new BsonDocument("set", new BsonString(coordinator.setName()))
            .append("date", new BsonDateTime(System.currentTimeMillis()))
            .append("myState", new BsonInt32(coordinator.role(self).code()))
            .append("term", new BsonInt64(coordinator.term()))
            .append("optimes", new BsonDocument("lastCommittedOpTime", new BsonDocument("ts", majority)
                .append("t", new BsonInt64(coordinator.term())))
                .append("appliedOpTime", new BsonDocument("ts", self.applied().clusterTime())
                    .append("t", new BsonInt64(coordinator.term()))))
            .append("members", members)
            .append("ok", new BsonDouble(1));
    }

    private BsonDocument replSetGetConfig() {
        BsonArray members = new BsonArray();
        for (MemberState m : coordinator.members()) {
            members.add(new BsonDocument("_id", new BsonInt32(m.index())).append("host", new BsonString(m.host()))
                .append("priority", new BsonDouble(1)).append("votes", new BsonInt32(1)));
        }
        return new BsonDocument("config", new BsonDocument("_id", new BsonString(coordinator.setName()))
            .append("version", new BsonInt32(1)).append("term", new BsonInt64(coordinator.term()))
            .append("members", members)).append("ok", new BsonDouble(1));
    }

    private static BsonDocument buildInfo() {
        return new BsonDocument("version", new BsonString("6.0.0"))
            .append("gitVersion", new BsonString("thermocline-embedded"))
            .append("versionArray", new BsonArray(List.of(new BsonInt32(6), new BsonInt32(0), new BsonInt32(0), new BsonInt32(0))))
            .append("bits", new BsonInt32(64))
            .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024))
            .append("ok", new BsonDouble(1));
    }

    private static BsonDocument getParameter(BsonDocument command) {
        BsonDocument reply = new BsonDocument();
        if (command.containsKey("featureCompatibilityVersion")) {
            reply.append("featureCompatibilityVersion", new BsonDocument("version", new BsonString("6.0")));
        }
        return reply.append("ok", new BsonDouble(1));
    }
}
