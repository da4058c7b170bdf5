package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.ProgressSignal;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Test hooks that hold the primary's writes at a chosen moment: after their storage change and before their oplog
 * entry, or between two documents of one statement; and counts of the writes held there.
 */
public final class WriteHolds {
    private final ProgressSignal progress;

    WriteHolds(ProgressSignal progress) {
        this.progress = progress;
    }

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
            progress.await(
                    () -> !member.heldBeforeOplog(), WritesInFlight.READ_WAITS_FOR_WRITE_MILLIS, TimeUnit.MILLISECONDS);
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
                    () -> member.isStopping() || member.takeStep(),
                    WritesInFlight.READ_WAITS_FOR_WRITE_MILLIS,
                    TimeUnit.MILLISECONDS);
        }
    }

    /** How many write steps have waited at {@link #writeStepsAllowed}'s hold. */
    public long heldSteps() {
        return heldSteps.get();
    }

    private final AtomicLong heldSteps = new AtomicLong();

    /** How many writes have reached the hold so far (a test waits for its write to be there). */
    public long heldWrites() {
        return heldWrites.get();
    }

    private final AtomicLong heldWrites = new AtomicLong();
}
