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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replica set's shared state: who is primary in which term, the oplog and clock, each
 * member's applied position, elections, rollback and majority waits.
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
    /** Pre-images of writes a majority has not applied yet: what majority reads must still see. */
    private final ConcurrentSkipListMap<OplogPosition, Change> notYetMajority = new ConcurrentSkipListMap<>();

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
        for (int i = 0; i < entries.size(); i++) {
            if (changes.get(i).documentKey() != null) {
                notYetMajority.put(entries.get(i).position(), changes.get(i));
            }
        }
        oplog.append(entries);
        OplogPosition last = entries.get(entries.size() - 1).position();
        writer.applied(last, now);
        forgetMajorityCommitted();
        progress.signalAll();
        return last;
    }

    /** Records progress of a secondary (the applier calls this after each entry). */
    void applied(MemberState member, OplogEntry entry) {
        member.applied(entry.position(), entry.wallTimeMillis());
        forgetMajorityCommitted();
        progress.signalAll();
    }

    private void forgetMajorityCommitted() {
        notYetMajority.headMap(majorityCommitted(), true).clear();
    }

    /**
     * For a majority read on a member: the majority-committed version (null: absent) of each
     * document of a collection that writes after the majority point, up to what the member
     * applied, have changed.
     */
    public Map<BsonValue, BsonDocument> majorityPreImages(MemberState member, String database, String collection) {
        Map<BsonValue, BsonDocument> committed = new LinkedHashMap<>();
        OplogPosition majority = majorityCommitted();
        OplogPosition applied = member.applied();
        if (!applied.isAfter(majority)) {
            return committed;
        }
        for (Change c : notYetMajority.subMap(majority, false, applied, true).values()) {
            if (database.equals(c.database())
                    && collection.equals(c.collection())
                    && !committed.containsKey(c.documentKey().get("_id"))) {
                committed.put(c.documentKey().get("_id"), c.preImage());
            }
        }
        return committed;
    }

    /**
     * The operationTime of a majority read of a member: the majority commit point, or what the member has applied if
     * it is behind that point.
     */
    public BsonTimestamp majorityReadTime(MemberState member) {
        OplogPosition majority = majorityCommitted();
        return (member.visible().isAfter(majority) ? majority : member.visible()).clusterTime();
    }

    /** The newest position a majority of members has applied: what change streams may show. */
    public OplogPosition majorityCommitted() {
        List<OplogPosition> positions = new ArrayList<>();
        for (MemberState m : members) {
            positions.add(m.applied());
        }
        positions.sort(Comparator.reverseOrder());
        return positions.get(members.size() / 2);
    }

    /**
     * Waits until a majority applied the position. A writer that stops being primary meanwhile
     * is told so (as MongoDB interrupts such waits), since its write may be rolled back.
     */
    public boolean awaitMajority(MemberState writer, OplogPosition position, Duration timeout) {
        return awaitAcknowledged(writer, position, members.size() / 2 + 1, timeout);
    }

    public boolean awaitAcknowledged(MemberState writer, OplogPosition position, int count, Duration timeout) {
        boolean done = progress.await(
                () -> acknowledged(position) >= count || !isPrimary(writer), timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (acknowledged(position) >= count) {
            return true;
        }
        if (done) {
            throw new ReplicationException(
                    11602,
                    "InterruptedDueToReplStateChange",
                    "operation was interrupted because the primary stepped down while waiting for replication");
        }
        return false;
    }

    private long acknowledged(OplogPosition position) {
        return members.stream().filter(m -> !position.isAfter(m.applied())).count();
    }

    /** Waits until a member has applied every entry stamped at or before a cluster time. */
    public boolean awaitApplied(MemberState member, BsonTimestamp clusterTime, Duration timeout) {
        return progress.await(() -> hasApplied(member, clusterTime), timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Waits until a majority read on the member sees every write at or before the time: the member and a majority
     * applied it (mongod's {@code readConcern: {level: "majority", afterClusterTime}}). Counted when it has to wait.
     */
    public boolean awaitMajorityApplied(MemberState member, BsonTimestamp clusterTime, Duration timeout) {
        BooleanSupplier covered = () -> hasApplied(member, clusterTime)
                && oplog.after(majorityCommitted(), OplogPosition.endOf(clusterTime), 1)
                        .isEmpty();
        if (covered.getAsBoolean()) {
            return true;
        }
        readsWaitingForMajority.incrementAndGet();
        return progress.await(covered, timeout.toMillis(), TimeUnit.MILLISECONDS);
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

    /** How many majority reads with afterClusterTime waited for a majority to apply it. */
    public long readsWaitingForMajority() {
        return readsWaitingForMajority.get();
    }

    private final java.util.concurrent.atomic.AtomicLong readsWaitingForMajority =
            new java.util.concurrent.atomic.AtomicLong();

    public boolean hasApplied(MemberState member, BsonTimestamp clusterTime) {
        return oplog.after(member.applied(), OplogPosition.endOf(clusterTime), 1)
                .isEmpty();
    }

    /**
     * The operationTime a member reports for a read, taken after the read: the newest cluster time whose
     * writes it may have seen (a secondary's entry being applied counts), never one before a write the
     * read saw, as a mongod's secondary reads at its lastApplied snapshot. A session that carries it as
     * afterClusterTime to another member then waits there for everything this read saw.
     */
    public BsonTimestamp operationTime(MemberState member) {
        return member.visible().clusterTime();
    }

    /**
     * The operationTime of a read that has just run: the primary changes storage before it stamps the write's oplog
     * entry, so a read in between may see the write while the member's newest entry is still the previous one. The
     * read waits for the writes begun before it ended to stamp theirs (one at most: the write lock serializes them),
     * so it never reports a time before a write it saw, as a mongod reads at a snapshot whose time covers its writes.
     */
    public BsonTimestamp operationTimeAfterRead(MemberState member) {
        awaitStamped(member, member.writesBegun(), TimeUnit.MILLISECONDS.toNanos(READ_WAITS_FOR_WRITE_MILLIS));
        return member.visible().clusterTime();
    }

    /** Waits until the member's write statements begun so far have their oplog entries; false when the wait ran out. */
    private boolean awaitStamped(MemberState member, long begun, long timeoutNanos) {
        if (member.writesEnded() >= begun) {
            return true;
        }
        readsWaitingForAStamp.incrementAndGet();
        progress.signalAll();
        return progress.await(() -> member.writesEnded() >= begun, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs a read while no write statement of the member is between its storage change and its oplog entry: it waits
     * for those in flight, and reads again if one began meanwhile (statements are short; the write lock serializes
     * them, and a transaction's open writes are hidden by their pre-images instead).
     */
    public <T> T betweenWriteStatements(MemberState member, java.util.function.Supplier<T> read) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_WAITS_FOR_WRITE_MILLIS);
        while (true) {
            long begun = member.writesBegun();
            if (!awaitStamped(member, begun, deadline - System.nanoTime())) {
                throw new ReplicationException(
                        50,
                        "MaxTimeMSExpired",
                        "a majority read found a write statement that did not reach the oplog within "
                                + READ_WAITS_FOR_WRITE_MILLIS / 1000 + "s");
            }
            T result = read.get();
            if (member.writesBegun() == begun) {
                return result;
            }
        }
    }

    /** How many reads found a write between storage and oplog after they ran, and waited for its stamp. */
    public long readsWaitingForAStamp() {
        return readsWaitingForAStamp.get();
    }

    private final java.util.concurrent.atomic.AtomicLong readsWaitingForAStamp =
            new java.util.concurrent.atomic.AtomicLong();

    /**
     * Runs one step of the primary's writes (see {@link MemberState#writing}): one document's storage change and its
     * oplog entry, so a majority read waits for one document, never for a whole multi-document statement (mongod's
     * readers never wait for a writer). Its end wakes reads waiting for it.
     */
    public <T> T writing(MemberState member, java.util.function.Supplier<T> statement) {
        try {
            return member.writing(statement);
        } finally {
            progress.signalAll();
        }
    }

    /** A write that takes longer than this between storage and oplog is not waited for (a stopped member). */
    private static final long READ_WAITS_FOR_WRITE_MILLIS = 30_000;

    /** Test hook: holds the primary's writes between their storage change and their oplog entry (false: lets them go). */
    public void heldBeforeOplog(MemberState member, boolean value) {
        member.heldBeforeOplog(value);
        progress.signalAll();
    }

    /** Where a held write waits (see {@link #heldBeforeOplog}); returns at once when nothing is held. */
    public void passBeforeOplog(MemberState member) {
        if (member.heldBeforeOplog()) {
            heldWrites.incrementAndGet();
            progress.signalAll();
            progress.await(() -> !member.heldBeforeOplog(), READ_WAITS_FOR_WRITE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Test hook: lets the primary's next {@code steps} write steps begin and holds the ones after, before they change
     * storage (negative: lets every step go): the moment between two documents of one multi-document statement.
     */
    public void writeStepsAllowed(MemberState member, int steps) {
        member.stepsAllowed(steps);
        progress.signalAll();
    }

    /** Where a held write step waits (see {@link #writeStepsAllowed}); returns at once when nothing is held. */
    public void passDocumentHold(MemberState member) {
        if (!member.takeStep()) {
            heldSteps.incrementAndGet();
            progress.signalAll();
            progress.await(
                    () -> member.isStopping() || member.takeStep(), READ_WAITS_FOR_WRITE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** How many write steps have waited at {@link #writeStepsAllowed}'s hold. */
    public long heldSteps() {
        return heldSteps.get();
    }

    private final java.util.concurrent.atomic.AtomicLong heldSteps = new java.util.concurrent.atomic.AtomicLong();

    /** How many writes have reached the hold so far (a test waits for its write to be there). */
    public long heldWrites() {
        return heldWrites.get();
    }

    private final java.util.concurrent.atomic.AtomicLong heldWrites = new java.util.concurrent.atomic.AtomicLong();

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
        notYetMajority.tailMap(winner.applied(), false).clear();
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

    /**
     * Whether a member's data diverged from the oplog (it applied entries that were rolled back, or
     * the entries it needs fell off the bounded oplog): then it must copy the primary's data.
     */
    public boolean needsResync(MemberState member) {
        OplogPosition applied = member.applied();
        if (applied.isAfter(oplog.last())) {
            return true;
        }
        if (applied.equals(OplogPosition.ORIGIN)) {
            return oplog.trimmedThrough().isAfter(OplogPosition.ORIGIN);
        }
        return !oplog.contains(applied) && !applied.equals(oplog.trimmedThrough());
    }

    /** Initial sync from the primary while writes are held off. */
    public void resync(MemberState member) {
        MemberState source = primary().orElse(null);
        if (source == null || source == member) {
            member.applied(oplog.last(), System.currentTimeMillis());
            return;
        }
        Object owner = new Object();
        writeLock.acquire(owner, 1, TimeUnit.DAYS);
        try {
            member.store().copyFrom(source.store());
            member.applied(source.applied(), source.appliedWallMillis());
            log.info("event=resync set={} member={} from={}", setName, member.index(), source.index());
        } finally {
            writeLock.releaseAll(owner);
        }
        progress.signalAll();
    }

    /** Used at start: positions members at a known point (after replaying the persisted oplog). */
    public void restoreApplied(MemberState member, OplogPosition position) {
        member.applied(position, System.currentTimeMillis());
    }
}
