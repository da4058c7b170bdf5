package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.ProgressSignal;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;

/**
 * The primary's write statements between their storage change and their oplog entry, and the reads that must not
 * report a time before a write they saw: they wait for those writes to be stamped.
 */
public final class WritesInFlight {
    private final ProgressSignal progress;

    WritesInFlight(ProgressSignal progress) {
        this.progress = progress;
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
    public <T> T betweenWriteStatements(MemberState member, Supplier<T> read) {
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

    private final AtomicLong readsWaitingForAStamp = new AtomicLong();

    /**
     * Runs one step of the primary's writes (see {@link MemberState#writing}): one document's storage change and its
     * oplog entry, so a majority read waits for one document, never for a whole multi-document statement (mongod's
     * readers never wait for a writer). Its end wakes reads waiting for it.
     */
    public <T> T writing(MemberState member, Supplier<T> statement) {
        try {
            return member.writing(statement);
        } finally {
            progress.signalAll();
        }
    }

    /** A write that takes longer than this between storage and oplog is not waited for (a stopped member). */
    static final long READ_WAITS_FOR_WRITE_MILLIS = 30_000;
}
