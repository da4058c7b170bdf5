package io.thermocline.tiering.feeder;

import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.metadata.TransactionId;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The feeder's checkpoint document, which carries its lease: taken when the feeder opens, renewed during long work
 * between batches, and written behind each batch (while the next batch goes to the archive; at most one write in
 * flight). Every write is a compare-and-set, so one that finds another instance took over fails. The lease is
 * trusted for two thirds of its duration from when its write was sent: a feeder past that stops before its next
 * archive write, and abandons writes in flight before the lease expires, so no successor's newer write is overwritten.
 */
final class LeasedCheckpoint {

    // the feeder's logger: these are the feeder's events
    private static final Logger LOG = LoggerFactory.getLogger(Feeder.class);

    private final MetadataStore store;
    private final String instanceId;
    private final Duration leaseDuration;
    private final FaultInjection faults;

    private volatile FeederCheckpoint checkpoint;
    private volatile long leaseValidUntilNanos;
    /** The checkpoint being written while the next batch goes to the archive (at most one). */
    private Future<FeederCheckpoint> inFlight;

    private final ExecutorService checkpointer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "thermocline-feeder-checkpoint");
        t.setDaemon(true);
        return t;
    });

    LeasedCheckpoint(MetadataStore store, String instanceId, Duration leaseDuration, FaultInjection faults) {
        this.store = store;
        this.instanceId = instanceId;
        this.leaseDuration = leaseDuration;
        this.faults = faults;
    }

    /** The checkpoint as this feeder last wrote it (null before its first). */
    FeederCheckpoint current() {
        return checkpoint;
    }

    /** Takes the lease unless another instance holds it unexpired; the stored checkpoint is kept as it is. */
    boolean take() {
        FeederCheckpoint current = store.feederCheckpoint();
        Instant now = Instant.now();
        if (current.owner() != null
                && !current.owner().equals(instanceId)
                && current.leaseExpiresAt().isAfter(now)) {
            LOG.info("event=feeder_lease_held owner={} until={}", current.owner(), current.leaseExpiresAt());
            return false;
        }
        checkpoint = store.saveFeederCheckpoint(
                current,
                withLease(
                        current,
                        current.resumeToken(),
                        current.mirroredThrough(),
                        current.openOwnTransaction(),
                        current.mirroredEvents(),
                        current.lagSeconds(),
                        current.pendingEvents()));
        return true;
    }

    /** Re-writes the checkpoint unchanged with a fresh lease (long work between batches). */
    void renew() {
        checkpoint = store.saveFeederCheckpoint(
                checkpoint,
                withLease(
                        checkpoint,
                        checkpoint.resumeToken(),
                        checkpoint.mirroredThrough(),
                        checkpoint.openOwnTransaction(),
                        checkpoint.mirroredEvents(),
                        checkpoint.lagSeconds(),
                        checkpoint.pendingEvents()));
    }

    /** After a resync: mirrored through {@code through}, with no resume token (the stream opened at a probe). */
    void resynced(BsonTimestamp through) {
        checkpoint = store.saveFeederCheckpoint(
                checkpoint, withLease(checkpoint, null, through, null, checkpoint.mirroredEvents(), 0, 0));
    }

    /**
     * Writes the checkpoint after a batch, on the checkpoint thread, from {@code base} (the settled checkpoint);
     * {@link #settle} waits for it. {@code saved} is told when it is persisted ({@link System#nanoTime}).
     */
    void writeBehind(
            FeederCheckpoint base,
            BsonDocument token,
            BsonTimestamp through,
            TransactionId openOwn,
            long mirrored,
            double lag,
            long pending,
            LongConsumer saved) {
        FeederCheckpoint next = leased(base, token, through, openOwn, mirrored, lag, pending);
        long sentAt = System.nanoTime();
        inFlight = checkpointer.submit(() -> {
            FeederCheckpoint stored = store.saveFeederCheckpoint(base, next);
            leaseValidUntilNanos = sentAt + leaseDuration.toNanos() * 2 / 3;
            checkpoint = stored;
            saved.accept(System.nanoTime());
            return stored;
        });
    }

    /**
     * Waits for the checkpoint in flight, if any: afterwards {@link #current} is the persisted one.
     * A failed write (another instance took over, the fast tier is unreachable) is thrown here.
     */
    void settle() throws InterruptedException {
        Future<FeederCheckpoint> pendingWrite = inFlight;
        if (pendingWrite == null) {
            return;
        }
        inFlight = null;
        try {
            pendingWrite.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException("the feeder's checkpoint write failed", e.getCause());
        }
        faults.reached(FaultPoint.FEEDER_CHECKPOINTED);
    }

    /** Settles, and forgets a failed checkpoint write: the caller re-reads the stored one. */
    void settleQuietly() {
        try {
            settle();
        } catch (InjectedCrash crash) {
            throw crash;
        } catch (RuntimeException e) {
            LOG.debug("event=feeder_checkpoint_dropped error=\"{}\"", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops before {@code work} (e.g. "archive write") when the lease can no longer be trusted. */
    void requireLease(String work) {
        if (System.nanoTime() > leaseValidUntilNanos) {
            throw new StaleStateException("the feeder's lease ran out before its " + work + "; re-acquiring");
        }
    }

    /**
     * A write still in flight when the lease runs out could land after a successor's newer writes:
     * the driver abandons it (and the server stops it, maxTimeMS) before the lease expires.
     */
    long archiveWriteTimeoutMillis() {
        long leaseLeftMillis = (leaseValidUntilNanos - System.nanoTime()) / 1_000_000 + leaseDuration.toMillis() / 3;
        if (leaseLeftMillis <= 0) {
            throw new StaleStateException("the feeder's lease ran out during its archive writes; re-acquiring");
        }
        return leaseLeftMillis;
    }

    /** After the feeder's loop stopped: a write in flight finishes, no other starts. */
    void close() {
        checkpointer.shutdown();
    }

    private FeederCheckpoint withLease(
            FeederCheckpoint base,
            BsonDocument token,
            BsonTimestamp through,
            TransactionId openOwn,
            long mirrored,
            double lag,
            long pending) {
        leaseValidUntilNanos = System.nanoTime() + leaseDuration.toNanos() * 2 / 3;
        return leased(base, token, through, openOwn, mirrored, lag, pending);
    }

    /** The checkpoint after {@code base} with this instance's lease renewed for a full lease from now. */
    private FeederCheckpoint leased(
            FeederCheckpoint base,
            BsonDocument token,
            BsonTimestamp through,
            TransactionId openOwn,
            long mirrored,
            double lag,
            long pending) {
        return new FeederCheckpoint(
                token,
                through,
                openOwn,
                mirrored,
                lag,
                pending,
                instanceId,
                Instant.now().plus(leaseDuration),
                base.version());
    }
}
