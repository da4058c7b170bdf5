package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.storage.InitialSyncCloner;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A member whose data diverged from the oplog copies the primary's (initial sync); at start, members' positions. */
public final class InitialSync {
    private static final Logger log = LoggerFactory.getLogger(InitialSync.class);

    private final ReplicationCoordinator coordinator;

    InitialSync(ReplicationCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    /**
     * Whether a member's data diverged from the oplog (it applied entries that were rolled back, or
     * the entries it needs fell off the bounded oplog): then it must copy the primary's data.
     */
    public boolean needsResync(MemberState member) {
        OplogPosition applied = member.applied();
        if (applied.isAfter(coordinator.oplog().last())) {
            return true;
        }
        if (applied.equals(OplogPosition.ORIGIN)) {
            return coordinator.oplog().trimmedThrough().isAfter(OplogPosition.ORIGIN);
        }
        return !coordinator.oplog().contains(applied)
                && !applied.equals(coordinator.oplog().trimmedThrough());
    }

    /** Initial sync from the primary while writes are held off. */
    public void resync(MemberState member) {
        MemberState source = coordinator.primary().orElse(null);
        if (source == null || source == member) {
            member.applied(coordinator.oplog().last(), System.currentTimeMillis());
            return;
        }
        Object owner = new Object();
        coordinator.writeLock().acquire(owner, 1, TimeUnit.DAYS);
        try {
            InitialSyncCloner.copy(source.store(), member.store());
            member.applied(source.applied(), source.appliedWallMillis());
            log.info("event=resync set={} member={} from={}", coordinator.setName(), member.index(), source.index());
        } finally {
            coordinator.writeLock().releaseAll(owner);
        }
        coordinator.progress().signalAll();
    }

    /** Used at start: positions members at a known point (after replaying the persisted oplog). */
    public void restoreApplied(MemberState member, OplogPosition position) {
        member.applied(position, System.currentTimeMillis());
    }
}
