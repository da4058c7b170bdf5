package io.thermocline.proxy.causal;

import io.thermocline.config.ReadConsistency;
import io.thermocline.proxy.backend.BackendUnavailableException;
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
 * <li>{@code linearizable}: the fast tier's present when the read arrived (a {@link FastTierClock}
 *     probe started after arrival), so the archive holds every write any client acknowledged before;</li>
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
    /** How long the archive has been down (empty while it answers): such reads need it, so they do not wait for the feeder. */
    private volatile Supplier<Optional<Duration>> archiveUnreachableFor = Optional::empty;

    /**
     * How reads passed the barrier so far: for metrics and benchmarks. {@code skipped}: point reads
     * that did not need it ({@link PointReadSkip}).
     */
    public record Counts(long immediate, long probed, long waitedForFeeder, long timedOut, long skipped) {
    }

    public ReadBarrier(ReadConsistency mode, FastTierClock clock, MirrorProgress progress, Duration timeout) {
        this.mode = mode;
        this.clock = clock;
        this.progress = progress;
        this.timeout = timeout;
    }

    public void failFastWhile(Supplier<Optional<Duration>> unreachableFor) {
        this.archiveUnreachableFor = unreachableFor;
    }

    public ReadConsistency mode() {
        return mode;
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
    public BsonTimestamp await(String command, BsonTimestamp trackedPoint, BsonTimestamp clientPoint) throws InterruptedException {
        Optional<Duration> down = archiveUnreachableFor.get();
        if (down.isPresent() && down.get().compareTo(TierMonitor.OUTAGE_CONFIRMED) >= 0) {
            timedOut.increment();
            throw new BackendUnavailableException("the archive tier is unreachable (no member has answered for " + down.get().toSeconds()
                    + " s) and this " + command + " needs it: refused at once, not applied; retry later (docs/faults.md)", false);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        BsonTimestamp point;
        boolean probe = mode == ReadConsistency.LINEARIZABLE || clientPoint != null && !progress.known().covers(clientPoint)
                && (trackedPoint == null || clientPoint.compareTo(trackedPoint) > 0);
        if (mode == ReadConsistency.LINEARIZABLE) {
            point = present(command, deadline);
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
                throw mode == ReadConsistency.LINEARIZABLE ? CausalWaitTimeout.linearizable(command, point, timeout)
                        : new CausalWaitTimeout(command, point, timeout);
            }
        }
        return through();
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

    public Counts counts() {
        return new Counts(immediate.sum(), probed.sum(), waited.sum(), timedOut.sum(), skipped.sum());
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
