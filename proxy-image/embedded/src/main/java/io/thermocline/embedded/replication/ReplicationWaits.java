package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.Oplog;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.oplog.ProgressSignal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.bson.BsonTimestamp;

/**
 * Waits for replication: until members acknowledged a write (write concern), until a member applied a cluster time
 * (afterClusterTime), until a majority read sees it.
 */
public final class ReplicationWaits {
    private final List<MemberState> members;
    private final Oplog oplog;
    private final ProgressSignal progress;
    private final MajorityCommitPoint commitPoint;
    private final Predicate<MemberState> isPrimary;

    ReplicationWaits(
            List<MemberState> members,
            Oplog oplog,
            ProgressSignal progress,
            MajorityCommitPoint commitPoint,
            Predicate<MemberState> isPrimary) {
        this.members = members;
        this.oplog = oplog;
        this.progress = progress;
        this.commitPoint = commitPoint;
        this.isPrimary = isPrimary;
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
                () -> acknowledged(position) >= count || !isPrimary.test(writer),
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
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
                && oplog.after(commitPoint.majorityCommitted(), OplogPosition.endOf(clusterTime), 1)
                        .isEmpty();
        if (covered.getAsBoolean()) {
            return true;
        }
        readsWaitingForMajority.incrementAndGet();
        return progress.await(covered, timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** How many majority reads with afterClusterTime waited for a majority to apply it. */
    public long readsWaitingForMajority() {
        return readsWaitingForMajority.get();
    }

    private final AtomicLong readsWaitingForMajority = new AtomicLong();

    public boolean hasApplied(MemberState member, BsonTimestamp clusterTime) {
        return oplog.after(member.applied(), OplogPosition.endOf(clusterTime), 1)
                .isEmpty();
    }
}
