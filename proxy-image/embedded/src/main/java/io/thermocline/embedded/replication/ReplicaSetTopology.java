package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.HybridClock;
import io.thermocline.embedded.oplog.Oplog;
import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.oplog.ProgressSignal;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who runs and who is primary in which term: members started, stopped and paused; elections (at once, or after
 * electionTimeout), stepDown, and the rollback of what a new primary never received. Its changes run one at a time
 * (this object's monitor) and wake hello's waiters.
 */
public final class ReplicaSetTopology {
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetTopology.class);

    private final String setName;
    private final List<MemberState> members;
    private final HybridClock clock;
    private final Oplog oplog;
    private final ProgressSignal progress;
    private final ProgressSignal topology;
    private final WriteLock writeLock;
    private final MajorityCommitPoint commitPoint;
    private final List<IntConsumer> primaryChangeListeners = new CopyOnWriteArrayList<>();

    private volatile Duration electionTimeout = Duration.ZERO;
    private ScheduledExecutorService elections;
    private volatile long term;
    private volatile int primary = -1;

    ReplicaSetTopology(
            String setName,
            List<MemberState> members,
            HybridClock clock,
            Oplog oplog,
            ProgressSignal progress,
            ProgressSignal topology,
            WriteLock writeLock,
            MajorityCommitPoint commitPoint,
            long initialTerm) {
        this.setName = setName;
        this.members = members;
        this.clock = clock;
        this.oplog = oplog;
        this.progress = progress;
        this.topology = topology;
        this.writeLock = writeLock;
        this.commitPoint = commitPoint;
        this.term = initialTerm;
    }

    public long term() {
        return term;
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
