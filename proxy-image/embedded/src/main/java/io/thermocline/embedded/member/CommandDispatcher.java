package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.thermocline.embedded.changestream.ChangeStreamCursors;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.write.WriteExecutor;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers one member's commands: replica-set commands, fail points, change streams and cursors here; reads, writes
 * (through the oplog) and transactions in {@link ReadCommands}, {@link WriteCommands} and {@link TransactionCommands};
 * everything else on the member's storage engine. Every reply carries operationTime and $clusterTime.
 */
final class CommandDispatcher {
    private static final Logger log = LoggerFactory.getLogger(CommandDispatcher.class);

    /** Thrown to make the connection close without a reply (failCommand closeConnection). */
    static final class CloseConnection extends RuntimeException {
        CloseConnection() {
            super("closeConnection fail point", null, false, false);
        }
    }

    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final FailPoints failPoints = new FailPoints();
    private final DelayedRequests delayedRequests = new DelayedRequests();
    private final WriteAdmission admission;
    private final TransactionCommands transactions;
    private final ReadCommands reads;
    private final WriteCommands writes;
    private final ChangeStreamCursors changeStreams;

    CommandDispatcher(
            ReplicationCoordinator coordinator, MemberState self, SessionCatalog sessions, boolean majorityByDefault) {
        this.coordinator = coordinator;
        this.self = self;
        this.admission = new WriteAdmission(coordinator, self);
        WriteConcernWait writeConcern = new WriteConcernWait(coordinator, self, majorityByDefault);
        this.transactions = new TransactionCommands(coordinator, self, sessions, admission, writeConcern);
        this.reads = new ReadCommands(coordinator, self, sessions, transactions, admission);
        this.writes = new WriteCommands(coordinator, self, sessions, transactions, admission, writeConcern);
        this.changeStreams = new ChangeStreamCursors(coordinator, self, reads::lookupCommitted);
    }

    void closeCursors() {
        changeStreams.closeAll();
    }

    BsonDocument dispatch(Channel channel, int connectionId, String db, BsonDocument command, boolean legacy) {
        String name = command.isEmpty() ? "" : command.getFirstKey();
        DelayedRequests.Held held = delayedRequests.pass(name);
        BsonDocument reply = null;
        try {
            reply = dispatchNow(channel, connectionId, db, name, command, legacy);
            return reply;
        } finally {
            delayedRequests.ran(held, reply);
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
                CommandResult failed = applyFailPoint(fail.get(), channel, name, command);
                if (failed != null) {
                    return decorate(failed);
                }
            }
            return decorate(route(channel, connectionId, db, name, command, legacy));
        } catch (CloseConnection e) {
            throw e;
        } catch (ReplicationException e) {
            BsonDocument error = MemberStore.errorReply(e.code(), e.codeName(), e.getMessage());
            BsonArray labels = ErrorLabels.of(e.code(), name, command);
            if (!labels.isEmpty()) {
                error.append("errorLabels", labels);
            }
            if (ErrorLabels.isStateChange(e.code())) {
                error.append("topologyVersion", HelloReply.topologyVersion(self));
            }
            return decorate(new CommandResult(error, coordinator.operationTime(self)));
        } catch (RuntimeException e) {
            log.warn("event=commandFailed member={} command={} error={}", self.index(), name, e.toString());
            return decorate(new CommandResult(
                    MemberStore.errorReply(1, "InternalError", name + " failed: " + e),
                    coordinator.operationTime(self)));
        }
    }

    private CommandResult applyFailPoint(
            FailPoints.FailCommand fail, Channel channel, String name, BsonDocument command) {
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
                    fail.errorLabels().isEmpty() ? ErrorLabels.of(fail.errorCode(), name, command) : fail.errorLabels();
            if (!labels.isEmpty()) {
                error.append("errorLabels", labels);
            }
            return new CommandResult(error, coordinator.operationTime(self));
        }
        return null;
    }

    /** mongod's {@code {waitForFailPoint: 'failCommand', timesEntered: n, maxTimeMS: t}}: returns once n commands entered it. */
    private CommandResult waitForFailPoint(BsonDocument command) {
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
        return new CommandResult(MemberStore.okReply(), coordinator.operationTime(self));
    }

    private void gossip(BsonDocument command) {
        BsonValue clusterTime = command.get("$clusterTime");
        if (clusterTime != null
                && clusterTime.isDocument()
                && clusterTime.asDocument().isTimestamp("clusterTime")) {
            coordinator.clock().advanceTo(clusterTime.asDocument().getTimestamp("clusterTime"));
        }
    }

    private BsonDocument decorate(CommandResult result) {
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

    private CommandResult route(
            Channel channel, int connectionId, String db, String name, BsonDocument command, boolean legacy) {
        String lower = name.toLowerCase();
        return switch (lower) {
            case "hello", "ismaster" ->
                new CommandResult(
                        HelloReply.build(coordinator, self, command, legacy || !lower.equals("hello"), connectionId),
                        coordinator.operationTime(self));
            case "buildinfo" -> new CommandResult(ReplicaSetStatus.buildInfo(), coordinator.operationTime(self));
            case "replsetgetstatus" ->
                new CommandResult(
                        ReplicaSetStatus.replSetGetStatus(coordinator, self), coordinator.operationTime(self));
            case "replsetgetconfig" ->
                new CommandResult(ReplicaSetStatus.replSetGetConfig(coordinator), coordinator.operationTime(self));
            case "replsetstepdown" -> stepDown(command);
            case "endsessions", "killsessions" -> transactions.endSessions(command.get(name));
            case "refreshsessions", "killallsessions" ->
                new CommandResult(MemberStore.okReply(), coordinator.operationTime(self));
            case "committransaction" -> transactions.commitTransaction(command);
            case "aborttransaction" -> transactions.abortTransaction(command);
            case "configurefailpoint" -> {
                long entered = failPoints.timesEntered();
                failPoints.configure(command);
                // as mongod: the times entered so far, the base of a later waitForFailPoint's timesEntered
                yield new CommandResult(
                        MemberStore.okReply().append("count", new BsonInt64(entered)), coordinator.operationTime(self));
            }
            case "waitforfailpoint" -> waitForFailPoint(command);
            case "getmore" -> getMore(channel, db, command);
            case "killcursors" -> killCursors(channel, db, command);
            case "getparameter" ->
                new CommandResult(ReplicaSetStatus.getParameter(command), coordinator.operationTime(self));
            case "serverstatus" ->
                new CommandResult(
                        ReplicaSetStatus.serverStatus(self.store().command(channel, db, command), coordinator, self),
                        coordinator.operationTime(self));
            default -> {
                if (lower.equals("aggregate") && isChangeStream(command)) {
                    yield changeStream(db, command);
                }
                if (WriteExecutor.isWrite(lower) || WriteExecutor.isAggregateWrite(lower, command)) {
                    yield writes.write(channel, db, name, command);
                }
                yield reads.read(channel, db, lower, command);
            }
        };
    }

    // ---- change streams and cursors ----

    private static boolean isChangeStream(BsonDocument command) {
        return ChangeStreamCursors.isChangeStream(command);
    }

    private CommandResult changeStream(String db, BsonDocument command) {
        reads.checkReadable("aggregate", command);
        reads.awaitCausalPoint(command);
        return new CommandResult(changeStreams.open(db, command), coordinator.operationTime(self));
    }

    private CommandResult getMore(Channel channel, String db, BsonDocument command) {
        Optional<BsonDocument> reply = changeStreams.getMore(command);
        return new CommandResult(
                reply.orElseGet(() -> self.store().command(channel, db, command)), coordinator.operationTime(self));
    }

    private CommandResult killCursors(Channel channel, String db, BsonDocument command) {
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
        return new CommandResult(reply, coordinator.operationTime(self));
    }

    // ---- replica-set commands ----

    private CommandResult stepDown(BsonDocument command) {
        admission.requirePrimary();
        long catchUp = command.getNumber("secondaryCatchUpPeriodSecs", new BsonInt32(10))
                .longValue();
        coordinator.replicaSetTopology().stepDown(Duration.ofSeconds(catchUp));
        return new CommandResult(MemberStore.okReply(), coordinator.operationTime(self));
    }
}
