package io.thermocline.embedded.replication;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On disk, a write is acknowledged only once it is written to the storage directory (group commit: one flush
 * covers every write applied before it began), as {@code j: true} on a server. A flush the disk refuses (full,
 * read-only) is never retried behind the clients' backs: from then on every write is refused with the cause
 * ({@code OutOfDiskSpace}, 14031), so nothing is acknowledged that a stop would lose. In memory there is nothing
 * to wait for.
 */
public final class Durability {

    /** The server's OutOfDiskSpace. */
    public static final int REFUSED_CODE = 14031;

    private static final Logger LOG = LoggerFactory.getLogger(Durability.class);

    private final String setName;
    private final String directory;
    private final Runnable flush;
    private final AtomicLong applied = new AtomicLong();
    private long flushedThrough; // guarded by this
    private final AtomicReference<String> refusal = new AtomicReference<>();

    private Durability(String setName, String directory, Runnable flush) {
        this.setName = setName;
        this.directory = directory;
        this.flush = flush;
    }

    public static Durability inMemory(String setName) {
        return new Durability(setName, null, null);
    }

    /** {@code flush} writes every member's store and the oplog to {@code directory}. */
    public static Durability onDisk(String setName, String directory, Runnable flush) {
        return new Durability(setName, directory, flush);
    }

    /** Refuses a write before it is applied once the disk refused a flush. */
    public void refuseIfFailed() {
        String cause = refusal.get();
        if (cause != null) {
            throw new ReplicationException(REFUSED_CODE, "OutOfDiskSpace", cause);
        }
    }

    /** Returns once every write applied before the call is on disk; throws the refusal if the disk refused it. */
    public void awaitDurable() {
        if (flush == null) {
            return;
        }
        refuseIfFailed();
        long ticket = applied.incrementAndGet();
        synchronized (this) {
            if (flushedThrough >= ticket) {
                return; // a flush that began after this write was applied covered it
            }
            refuseIfFailed(); // the flush this write waited for may have been refused
            long upTo = applied.get();
            flushNow();
            flushedThrough = upTo;
        }
    }

    /** Flushes now (the periodic flush too); a failure switches writes off and is thrown (once: later calls do nothing). */
    public synchronized void flushNow() {
        if (flush == null || refusal.get() != null) {
            return;
        }
        try {
            flush.run();
        } catch (RuntimeException e) {
            refuse(e);
            refuseIfFailed();
        }
    }

    /**
     * After a write failed inside the storage engine: waits out a flush in progress (a flush the disk refuses closes
     * H2's stores under the writes running beside it, before it records the refusal), then throws the refusal if there
     * is one, so the write is refused with the disk's cause rather than with H2's "closed".
     */
    public void refuseIfAFlushFailed() {
        if (flush == null) {
            return;
        }
        synchronized (this) {
            refuseIfFailed();
        }
    }

    /**
     * Switches writes off with {@code failure}'s cause (the first one stays): a failed flush, or H2 reporting a write
     * it could not make, which it reports before it closes the store. Not synchronized: H2 may call it from its own
     * threads, which a flush in progress may be waiting for.
     */
    public void refuse(Throwable failure) {
        if (flush == null) {
            return;
        }
        String cause = describe(failure);
        if (refusal.compareAndSet(null, cause)) {
            LOG.error(
                    "event=storage_refuses_writes set={} dir={} cause=\"{}\" action=refusing_writes",
                    setName,
                    directory,
                    cause);
        }
    }

    /** Why writes are refused (null while the disk takes them). */
    public Optional<String> refusal() {
        return Optional.ofNullable(refusal.get());
    }

    private String describe(Throwable e) {
        Throwable root = e;
        StringBuilder causes = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            root = t;
            causes.append(' ').append(t.getMessage());
        }
        String all = causes.toString();
        String what = all.contains("No space left") || all.contains("Disk quota")
                ? "disk full"
                : all.contains("Read-only") || all.contains("read-only") || all.contains("AccessDenied")
                        ? "storage read-only"
                        : "storage refused a write";
        return what + ": " + setName + " cannot write to " + directory + " ("
                + root.getClass().getSimpleName() + ": " + root.getMessage()
                + "); writes are refused until it can write there again and the replica set is restarted";
    }
}
