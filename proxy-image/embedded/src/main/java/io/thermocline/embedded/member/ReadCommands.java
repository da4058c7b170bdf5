package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.session.Transaction;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * A member's reads: secondaryOk, afterClusterTime, read concern majority, and what storage shows that a reader must not
 * see (open transactions' writes, a transaction's later commits, writes a majority has not applied).
 */
final class ReadCommands {
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
    private static final Duration DEFAULT_WAIT = Duration.ofSeconds(60);

    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final SessionCatalog sessions;
    private final TransactionCommands transactions;
    private final WriteAdmission admission;

    ReadCommands(
            ReplicationCoordinator coordinator,
            MemberState self,
            SessionCatalog sessions,
            TransactionCommands transactions,
            WriteAdmission admission) {
        this.coordinator = coordinator;
        this.self = self;
        this.sessions = sessions;
        this.transactions = transactions;
        this.admission = admission;
    }

    CommandResult read(Channel channel, String db, String lower, BsonDocument command) {
        checkReadable(lower, command);
        awaitCausalPoint(command);
        Transaction reader = command.containsKey("autocommit") ? transactions.openTransaction(command) : null;
        if (reader != null && reader.snapshot() == null) {
            Object owner = new Object();
            admission.lock(owner);
            try {
                sessions.takeSnapshot(reader, self.applied());
            } finally {
                coordinator.writeLock().release(owner);
            }
        }
        if (!command.isString(command.getFirstKey())) {
            return new CommandResult(self.store().command(channel, db, command), coordinator.operationTime(self));
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
        return new CommandResult(reply, coordinator.inFlight().operationTimeAfterRead(self));
    }

    /**
     * A read at the majority commit point, as mongod serves {@code readConcern: "majority"}: it sees no write a majority
     * has not applied, and its operationTime is that point's time, not the member's newest (mongod's
     * operation_time_read_and_write_concern.js). A follower that takes a majority read's time as "every change up to
     * here is in the change stream" (the stream shows only majority-committed changes) would otherwise claim a write it
     * had not received. It runs while no write statement is between storage and oplog, where the pre-images of the
     * changes after the majority point could not hide it.
     */
    private CommandResult majorityRead(Channel channel, String db, String lower, String coll, BsonDocument command) {
        BsonDocument reply = coordinator
                .inFlight()
                .betweenWriteStatements(
                        self,
                        () -> sessions.readCommitted(
                                () -> readHiding(channel, db, lower, command, majorityHidden(db, coll))));
        // taken after the read: the point only moves forward, and the read hid nothing at or before it
        return new CommandResult(reply, coordinator.commitPoint().majorityReadTime(self));
    }

    /**
     * What a majority read must not see as storage has it: the majority-committed version of each document changed
     * after the majority point, and the committed version of each an open transaction changed. Call inside
     * {@link SessionCatalog#readCommitted}.
     */
    private Map<BsonValue, BsonDocument> majorityHidden(String db, String coll) {
        Map<BsonValue, BsonDocument> hidden =
                new LinkedHashMap<>(coordinator.commitPoint().majorityPreImages(self, db, coll));
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
    Optional<BsonDocument> lookupCommitted(String db, String coll, BsonValue id) {
        // as a majority read: never a write still between storage and oplog, which no pre-image could hide
        return coordinator
                .inFlight()
                .betweenWriteStatements(
                        self,
                        () -> sessions.readCommitted(() -> {
                            Map<BsonValue, BsonDocument> hidden = majorityHidden(db, coll);
                            if (hidden.containsKey(id)) {
                                return Optional.ofNullable(hidden.get(id));
                            }
                            return self.store().findById(db, coll, id).map(d -> (BsonDocument) d);
                        }));
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

    void checkReadable(String lower, BsonDocument command) {
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

    void awaitCausalPoint(BsonDocument command) {
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
                ? coordinator.waits().awaitMajorityApplied(self, after, timeout)
                : coordinator.waits().awaitApplied(self, after, timeout))) {
            throw new ReplicationException(
                    50,
                    "MaxTimeMSExpired",
                    "operation exceeded time limit waiting for afterClusterTime " + after
                            + (majority ? " to be majority-committed" : "") + " on " + self.host());
        }
    }
}
