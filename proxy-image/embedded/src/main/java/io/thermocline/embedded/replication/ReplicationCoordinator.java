package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.HybridClock;
import io.thermocline.embedded.oplog.Oplog;
import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.oplog.ProgressSignal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replica set's shared state: who is primary in which term, the oplog and clock, each member's applied position,
 * elections and rollback. Its parts: the majority commit point ({@link MajorityCommitPoint}), waits for replication
 * ({@link ReplicationWaits}), writes between storage and oplog ({@link WritesInFlight}), test holds
 * ({@link WriteHolds}) and initial sync ({@link InitialSync}).
 */
public final class ReplicationCoordinator {
    private static final Logger log = LoggerFactory.getLogger(ReplicationCoordinator.class);

    private final String setName;
    private final List<MemberState> members;
    private final HybridClock clock;
    private final Oplog oplog;
    private final ProgressSignal progress;
    private final ProgressSignal topology = new ProgressSignal();
    private final WriteLock writeLock = new WriteLock();
    private final List<IntConsumer> primaryChangeListeners = new CopyOnWriteArrayList<>();
    private final MajorityCommitPoint commitPoint;
    private final ReplicationWaits waits;
    private final WritesInFlight inFlight;
    private final WriteHolds holds;
    private final InitialSync initialSync;

    private volatile Duration lag = Duration.ZERO;
    private volatile Durability durability;
    private volatile Duration electionTimeout = Duration.ZERO;
    private ScheduledExecutorService elections;
    private volatile long term;
    private volatile int primary = -1;

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
        this.term = initialTerm;
        this.durability = Durability.inMemory(setName);
        this.commitPoint = new MajorityCommitPoint(this.members);
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

    public long term() {
        return term;
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

    /** Called with the index of the new primary (-1: none) whenever the primary changes. */
    public void onPrimaryChange(IntConsumer listener) {
        primaryChangeListeners.add(listener);
    }

    public Optional<MemberState> primary() {
        int p = primary;
        return p < 0 ? Optional.empty() : Optional.of(members.get(p));
    }

    public MemberRole role(MemberState member) {
        if (!member.alive()) {
            return MemberRole.DOWN;
        }
        return primary == member.index() ? MemberRole.PRIMARY : MemberRole.SECONDARY;
    }

    public boolean isPrimary(MemberState member) {
        return primary == member.index() && member.alive();
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
                    term,
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

    public synchronized void started(MemberState member) {
        member.alive(true);
        member.newProcess();
        reconcile(-1);
        topologyChanged();
    }

    /** Starts several members at once, so the first election sees all of them (member 0 wins ties). */
    public synchronized void startedAll(List<MemberState> started) {
        for (MemberState m : started) {
            m.alive(true);
            m.newProcess();
        }
        reconcile(-1);
        topologyChanged();
    }

    public synchronized void stopped(MemberState member) {
        member.alive(false);
        reconcile(-1);
        topologyChanged();
    }

    public synchronized void paused(MemberState member, boolean value) {
        member.paused(value);
        progress.signalAll();
    }

    public synchronized void heldMidEntry(MemberState member, boolean value) {
        member.heldMidEntry(value);
        progress.signalAll();
    }

    /** Steps the primary down: the most up-to-date other live member, once caught up, is elected. */
    public void stepDown(Duration catchUp) {
        MemberState old = primary()
                .orElseThrow(() -> new ReplicationException(10107, "NotWritablePrimary", "no primary to step down"));
        Object owner = new Object();
        if (!writeLock.acquire(owner, catchUp.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(
                    262, "ExceededTimeLimit", "could not stop writes on the primary within " + catchUp);
        }
        try {
            OplogPosition target = oplog.last();
            boolean caughtUp = progress.await(
                    () -> members.stream().anyMatch(m -> m != old && m.alive() && !target.isAfter(m.applied())),
                    catchUp.toMillis(),
                    TimeUnit.MILLISECONDS);
            if (!caughtUp) {
                throw new ReplicationException(
                        262,
                        "ExceededTimeLimit",
                        "no electable secondary caught up with the primary within " + catchUp.toSeconds() + "s");
            }
            synchronized (this) {
                elect(old.index());
                topologyChanged();
            }
        } finally {
            writeLock.releaseAll(owner);
        }
    }

    /** Keeps a primary only while a majority of members runs; elects one when there is none. */
    private void reconcile(int excluded) {
        long alive = members.stream().filter(MemberState::alive).count();
        boolean majority = alive * 2 > members.size();
        boolean lost = primary >= 0 && (!members.get(primary).alive() || !majority);
        if (lost) {
            log.info("event=primaryLost set={} member={}", setName, primary);
            setPrimary(-1);
        }
        if (primary < 0 && majority) {
            if (lost && !electionTimeout.isZero()) {
                scheduleElection();
            } else {
                elect(excluded);
            }
        }
    }

    /** Like MongoDB's electionTimeoutMillis: after a primary is lost, the set has none for a while. */
    private void scheduleElection() {
        if (elections == null) {
            elections = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, setName + "-election");
                t.setDaemon(true);
                return t;
            });
        }
        elections.schedule(
                () -> {
                    synchronized (this) {
                        long alive = members.stream().filter(MemberState::alive).count();
                        if (primary < 0 && alive * 2 > members.size()) {
                            elect(-1);
                            topologyChanged();
                        }
                    }
                },
                electionTimeout.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    public void electionTimeout(Duration value) {
        if (value.isNegative()) {
            throw new IllegalArgumentException("election timeout must not be negative, got " + value);
        }
        electionTimeout = value;
    }

    public void close() {
        if (elections != null) {
            elections.shutdownNow();
        }
    }

    private void elect(int excluded) {
        Optional<MemberState> candidate = members.stream()
                .filter(MemberState::alive)
                .filter(m -> m.index() != excluded)
                .max(Comparator.comparing((MemberState m) -> m.applied()).thenComparing(m -> -m.index()));
        if (candidate.isEmpty()) {
            if (excluded >= 0) {
                throw new ReplicationException(262, "ExceededTimeLimit", "no electable secondary to take over");
            }
            return;
        }
        MemberState winner = candidate.get();
        List<OplogEntry> rolledBack = oplog.truncateAfter(winner.applied());
        commitPoint.rollBackAfter(winner.applied());
        if (!rolledBack.isEmpty()) {
            log.info("event=rollback set={} entries={} after={}", setName, rolledBack.size(), winner.applied());
        }
        term++;
        clock.advanceTo(winner.applied().clusterTime());
        log.info("event=elected set={} member={} term={}", setName, winner.index(), term);
        setPrimary(winner.index());
    }

    private void setPrimary(int index) {
        primary = index;
        for (IntConsumer listener : primaryChangeListeners) {
            listener.accept(index);
        }
    }

    private void topologyChanged() {
        for (MemberState m : members) {
            m.topologyChanged();
        }
        topology.signalAll();
        progress.signalAll();
    }
}
