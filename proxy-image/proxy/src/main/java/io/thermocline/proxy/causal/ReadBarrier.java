package io.thermocline.proxy.causal;

import io.thermocline.config.ReadConsistency;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.topology.OutOfService;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierMonitor;
import io.thermocline.tiering.state.MirroredThrough;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;

/**
 * What a read routed to the archive waits for before it runs, per {@code proxy.readConsistency}:
 * <ul>
 * <li>{@code linearizable}: every write to the read's namespaces the fast tier acknowledged before the
 *     read arrived, whichever client made it. With this proxy's stream of the fast tier's writes
 *     ({@link #watching}): a read of the fast tier's present started after arrival (a shared {@code ping},
 *     nothing written), the stream read through it, then only the seen writes to the read's namespaces that
 *     mirrored-through does not cover yet are waited for ({@link UnmirroredWrites}); none, and the read
 *     passes at once. When the stream cannot tell, the fast tier's present from a {@link FastTierClock}
 *     probe started after arrival, as everything before it;</li>
 * <li>{@code session}: the later of the causal point this proxy tracked for the client and the
 *     {@code afterClusterTime} the client sent. The latter may come from another proxy replica (a
 *     fast-tier time, as the tiered path hands back) or from the archive's own clock (a pass-through
 *     reply): it is capped at the fast tier's present, which is at or after every fast-tier time the
 *     client can have seen, so an unrelated clock never makes a read wait forever.</li>
 * </ul>
 * Both wait for the feeder's mirrored-through, bounded by {@code proxy.causalWaitTimeout}.
 */
public final class ReadBarrier {

    private final ReadConsistency mode;
    private final FastTierClock clock;
    private final MirrorProgress progress;
    private final Duration timeout;
    private final LongAdder immediate = new LongAdder();
    private final LongAdder probed = new LongAdder();
    private final LongAdder waited = new LongAdder();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    private final LongAdder quiet = new LongAdder();
    /** Null until {@link #watching}: then linearizable reads first ask the stream. */
    private volatile Watch watch;
    /** How long the archive has been down (empty while it answers): such reads need it, so they do not wait for the feeder. */
    private volatile Supplier<Optional<Duration>> archiveUnreachableFor = Optional::empty;

    /**
     * How reads passed the barrier so far: for metrics and benchmarks. {@code skipped}: point reads
     * that did not need it ({@link PointReadSkip}); {@code quiet}: linearizable reads whose namespaces had
     * no write the feeder had not mirrored ({@link UnmirroredWrites.Nothing}).
     */
    public record Counts(long immediate, long probed, long waitedForFeeder, long timedOut, long skipped, long quiet) {}

    /**
     * This proxy's view of the fast tier's writes, the shared reads of the fast tier's present, every tiered
     * namespace, and how long a read waits for the stream to reach the present before it probes instead.
     */
    public record Watch(FastTierWrites writes, FastTierClock present, java.util.Set<String> tiered, Duration catchUp) {}

    public ReadBarrier(ReadConsistency mode, FastTierClock clock, MirrorProgress progress, Duration timeout) {
        this.mode = mode;
        this.clock = clock;
        this.progress = progress;
        this.timeout = timeout;
    }

    /** From now on, linearizable reads wait only for unmirrored writes to their namespaces ({@link UnmirroredWrites}). */
    public void watching(Watch watch) {
        this.watch = watch;
    }

    public void failFastWhile(Supplier<Optional<Duration>> unreachableFor) {
        this.archiveUnreachableFor = unreachableFor;
    }

    public ReadConsistency mode() {
        return mode;
    }

    /** {@code proxy.causalWaitTimeout}: the longest a read waits to know what it must see. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Waits until the archive reflects what this read must see.
     *
     * @param trackedPoint the latest fast-tier time this proxy saw the client observe, or null
     * @param clientPoint  the {@code afterClusterTime} the client sent, or null
     * @return the fast-tier time through which the archive now holds every write (the reply's operationTime), null
     *         when nothing is mirrored yet
     * @throws CausalWaitTimeout when the feeder or the fast tier did not answer in time (retryable)
     */
    public BsonTimestamp await(String command, BsonTimestamp trackedPoint, BsonTimestamp clientPoint)
            throws InterruptedException {
        return await(command, null, trackedPoint, clientPoint);
    }

    /**
     * As {@link #await(String, BsonTimestamp, BsonTimestamp)} for a read of {@code namespaces} ("db.coll"; null:
     * any tiered namespace): in linearizable mode only writes to them are waited for.
     */
    public BsonTimestamp await(
            String command,
            java.util.Collection<String> namespaces,
            BsonTimestamp trackedPoint,
            BsonTimestamp clientPoint)
            throws InterruptedException {
        refuseWhileArchiveOutOfService(command);
        long deadline = System.nanoTime() + timeout.toNanos();
        BsonTimestamp point;
        boolean probe = mode == ReadConsistency.LINEARIZABLE
                || clientPoint != null
                        && !progress.known().covers(clientPoint)
                        && (trackedPoint == null || clientPoint.compareTo(trackedPoint) > 0);
        if (mode == ReadConsistency.LINEARIZABLE) {
            UnmirroredWrites.Verdict verdict = watched(namespaces, deadline);
            if (verdict instanceof UnmirroredWrites.Nothing) {
                quiet.increment();
                return through();
            }
            if (verdict instanceof UnmirroredWrites.WaitFor unmirrored) {
                point = unmirrored.latest();
                probe = false;
            } else {
                point = present(command, deadline);
            }
        } else {
            point = later(trackedPoint, clientPoint);
            if (probe) {
                point = later(trackedPoint, earlier(clientPoint, present(command, deadline)));
            }
        }
        if (progress.known().covers(point)) {
            (probe ? probed : immediate).increment();
        } else {
            waited.increment();
            if (!progress.await(point, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                timedOut.increment();
                throw mode == ReadConsistency.LINEARIZABLE
                        ? CausalWaitTimeout.linearizable(command, point, timeout)
                        : new CausalWaitTimeout(command, point, timeout);
            }
        }
        return through();
    }

    /**
     * Refuses at once, retryably, a command that needs the archive while it has been out of service for
     * {@link TierMonitor#OUTAGE_CONFIRMED}: no member answering, or a primary that answers {@code hello} but leaves reads
     * unanswered (docs/faults.md).
     */
    public void refuseWhileArchiveOutOfService(String command) {
        Optional<BackendUnavailableException> refusal =
                OutOfService.refusal(Tier.ARCHIVE, archiveUnreachableFor.get(), command);
        if (refusal.isPresent()) {
            timedOut.increment();
            throw refusal.get();
        }
    }

    /**
     * For a read proven not to need the barrier ({@link PointReadSkip}): counts it and returns, without
     * waiting, the fast-tier time through which the archive is known to hold every write (null when
     * nothing is mirrored yet), the reply's operationTime as for a read that waited.
     */
    public BsonTimestamp skipped() {
        skipped.increment();
        return through();
    }

    private BsonTimestamp through() {
        BsonTimestamp through = progress.known().clusterTime();
        return through.equals(MirroredThrough.NOTHING.clusterTime()) ? null : through;
    }

    /** How many reads waited for this proxy's write stream to reach the fast tier's present (0 when not watching). */
    public long streamWaits() {
        Watch w = watch;
        return w == null ? 0 : w.writes().waits();
    }

    public Counts counts() {
        return new Counts(immediate.sum(), probed.sum(), waited.sum(), timedOut.sum(), skipped.sum(), quiet.sum());
    }

    /**
     * What the stream says this read must wait for. Mirrored-through is read after the stream, and before the
     * archive is: whatever it covers, the archive held when the read ran.
     */
    private UnmirroredWrites.Verdict watched(java.util.Collection<String> namespaces, long deadline)
            throws InterruptedException {
        Watch w = watch;
        if (w == null) {
            return new UnmirroredWrites.Unknown("not watching");
        }
        BsonTimestamp present;
        try {
            // a ping started after the read arrived: at or after every write the fast tier acknowledged before
            present = w.present().now().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return new UnmirroredWrites.Unknown("no present: " + e);
        }
        long left = Math.max(0, deadline - System.nanoTime());
        FastTierWrites.Seen seen = w.writes()
                .awaitThrough(
                        present, Duration.ofNanos(Math.min(left, w.catchUp().toNanos())));
        return UnmirroredWrites.decide(seen, present, progress.known(), namespaces, w.tiered());
    }

    private BsonTimestamp present(String command, long deadline) throws InterruptedException {
        try {
            return clock.now().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw CausalWaitTimeout.probeFailed(command, timeout, e.getCause());
        } catch (TimeoutException e) {
            throw CausalWaitTimeout.probeFailed(command, timeout, null);
        }
    }

    static BsonTimestamp later(BsonTimestamp a, BsonTimestamp b) {
        if (a == null) {
            return b;
        }
        return b == null || a.compareTo(b) >= 0 ? a : b;
    }

    static BsonTimestamp earlier(BsonTimestamp a, BsonTimestamp b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
