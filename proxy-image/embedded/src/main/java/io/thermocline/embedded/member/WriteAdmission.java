package io.thermocline.embedded.member;

import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** What a write passes before it changes storage: this member is primary, and it holds the set's write lock. */
final class WriteAdmission {
    /** How long a write waits for the write lock, or for a transaction holding its documents. */
    static final Duration WRITE_LOCK_WAIT = Duration.ofSeconds(30);

    private final ReplicationCoordinator coordinator;
    private final MemberState self;

    WriteAdmission(ReplicationCoordinator coordinator, MemberState self) {
        this.coordinator = coordinator;
        this.self = self;
    }

    void lock(Object owner) {
        if (!coordinator.writeLock().acquire(owner, WRITE_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new ReplicationException(
                    24, "LockTimeout", "could not take the write lock within " + WRITE_LOCK_WAIT.toSeconds() + "s");
        }
    }

    void requirePrimary() {
        if (!coordinator.isPrimary(self)) {
            throw new ReplicationException(10107, "NotWritablePrimary", "not primary");
        }
    }
}
