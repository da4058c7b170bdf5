package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.HybridClock;
import io.thermocline.embedded.oplog.Oplog;
import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.oplog.ProgressSignal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntConsumer;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/**
 * The replica set's shared state: the oplog and clock, each member's applied position, and commit, which stamps the
 * primary's changes into the oplog. Its parts: who runs and who is primary in which term, with elections, stepDown
 * and rollback ({@link ReplicaSetTopology}), the majority commit point ({@link MajorityCommitPoint}), waits for
 * replication ({@link ReplicationWaits}), writes between storage and oplog ({@link WritesInFlight}), test holds
 * ({@link WriteHolds}) and initial sync ({@link InitialSync}).
 */
public final class ReplicationCoordinator {

    private final String setName;
    private final List<MemberState> members;
    private final HybridClock clock;
    private final Oplog oplog;
    private final ProgressSignal progress;
    private final ProgressSignal topology = new ProgressSignal();
    private final WriteLock writeLock = new WriteLock();
    private final MajorityCommitPoint commitPoint;
    private final ReplicationWaits waits;
    private final WritesInFlight inFlight;
    private final WriteHolds holds;
    private final InitialSync initialSync;
    private final ReplicaSetTopology replicaSetTopology;

    private volatile Duration lag = Duration.ZERO;
    private volatile Durability durability;

    public ReplicationCoordinator(
            String setName,
            List<MemberState> members,
            HybridClock clock,
            Oplog oplog,
            ProgressSignal progress,
            long initialTerm) {
        this.setName = setName;
        this.members = List.copyOf(members);
        this.clock = clock;
        this.oplog = oplog;
        this.progress = progress;
        this.durability = Durability.inMemory(setName);
        this.commitPoint = new MajorityCommitPoint(this.members);
        this.replicaSetTopology = new ReplicaSetTopology(
                setName, this.members, clock, oplog, progress, topology, writeLock, commitPoint, initialTerm);
        this.waits = new ReplicationWaits(this.members, oplog, progress, commitPoint, this::isPrimary);
        this.inFlight = new WritesInFlight(progress);
        this.holds = new WriteHolds(progress);
        this.initialSync = new InitialSync(this);
    }

    public String setName() {
        return setName;
    }

    /** When a write may be acknowledged: once on disk, for a set kept in a directory. */
    public Durability durability() {
        return durability;
    }

    public void durability(Durability durability) {
        this.durability = durability;
    }

    public List<MemberState> members() {
        return members;
    }

    public HybridClock clock() {
        return clock;
    }

    public Oplog oplog() {
        return oplog;
    }

    public ProgressSignal progress() {
        return progress;
    }

    public ProgressSignal topology() {
        return topology;
    }

    public WriteLock writeLock() {
        return writeLock;
    }

    /** The majority commit point, and what majority reads must still see of the writes after it. */
    public MajorityCommitPoint commitPoint() {
        return commitPoint;
    }

    /** Waits for write concern, afterClusterTime and majority reads. */
    public ReplicationWaits waits() {
        return waits;
    }

    /** The primary's write statements between storage and oplog, and the reads that wait for them. */
    public WritesInFlight inFlight() {
        return inFlight;
    }

    /** Test hooks holding the primary's writes. */
    public WriteHolds holds() {
        return holds;
    }

    /** Initial sync of a member whose data diverged. */
    public InitialSync initialSync() {
        return initialSync;
    }

    /** Who runs and who is primary in which term; elections and stepDown. */
    public ReplicaSetTopology replicaSetTopology() {
        return replicaSetTopology;
    }

    public long term() {
        return replicaSetTopology.term();
    }

    /** Called with the index of the new primary (-1: none) whenever the primary changes. */
    public void onPrimaryChange(IntConsumer listener) {
        replicaSetTopology.onPrimaryChange(listener);
    }

    public Optional<MemberState> primary() {
        return replicaSetTopology.primary();
    }

    public MemberRole role(MemberState member) {
        return replicaSetTopology.role(member);
    }

    public boolean isPrimary(MemberState member) {
        return replicaSetTopology.isPrimary(member);
    }

    public Duration lag() {
        return lag;
    }

    public void lag(Duration value) {
        if (value.isNegative()) {
            throw new IllegalArgumentException("replication lag must not be negative, got " + value);
        }
        lag = value;
        progress.signalAll();
    }

    /**
     * Stamps changes into the oplog as the primary applied them: one cluster time per document,
     * or one for a whole transaction with an index per statement. Caller holds the write lock.
     */
    public OplogPosition commit(
            MemberState writer, List<Change> changes, BsonDocument lsid, Long txnNumber, boolean inTransaction) {
        if (changes.isEmpty()) {
            return writer.applied();
        }
        long now = System.currentTimeMillis();
        List<OplogEntry> entries = new ArrayList<>(changes.size());
        BsonTimestamp shared = inTransaction ? clock.tick() : null;
        int index = 0;
        for (Change c : changes) {
            OplogPosition position =
                    inTransaction ? new OplogPosition(shared.getValue(), index++) : OplogPosition.of(clock.tick());
            entries.add(new OplogEntry(
                    position,
                    replicaSetTopology.term(),
                    now,
                    c.operation(),
                    c.database(),
                    c.collection(),
                    c.documentKey(),
                    c.document(),
                    c.updateDescription(),
                    lsid,
                    txnNumber,
                    inTransaction));
        }
        commitPoint.record(entries, changes);
        oplog.append(entries);
        OplogPosition last = entries.get(entries.size() - 1).position();
        writer.applied(last, now);
        commitPoint.forgetMajorityCommitted();
        progress.signalAll();
        return last;
    }

    /** Records progress of a secondary (the applier calls this after each entry). */
    void applied(MemberState member, OplogEntry entry) {
        member.applied(entry.position(), entry.wallTimeMillis());
        commitPoint.forgetMajorityCommitted();
        progress.signalAll();
    }

    /** Counts a write outside transactions that waits for an open transaction holding its documents or keys. */
    public void writeWaitsForATransaction() {
        writesWaitingForTransactions.incrementAndGet();
    }

    public long writesWaitingForTransactions() {
        return writesWaitingForTransactions.get();
    }

    private final java.util.concurrent.atomic.AtomicLong writesWaitingForTransactions =
            new java.util.concurrent.atomic.AtomicLong();

    /**
     * The operationTime a member reports for a read, taken after the read: the newest cluster time whose
     * writes it may have seen (a secondary's entry being applied counts), never one before a write the
     * read saw, as a mongod's secondary reads at its lastApplied snapshot. A session that carries it as
     * afterClusterTime to another member then waits there for everything this read saw.
     */
    public BsonTimestamp operationTime(MemberState member) {
        return member.visible().clusterTime();
    }
}
