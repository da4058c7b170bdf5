package io.thermocline.proxy.causal;

import io.thermocline.config.ReadConsistency;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.topology.OutOfService;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierMonitor;
import io.thermocline.tiering.state.MirroredThrough;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
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
 *     (a {@link Watch}): a read of the fast tier's present started after arrival (a shared {@code ping},
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
    private final LongAdder speculated = new LongAdder();
    private final LongAdder speculationsDropped = new LongAdder();
    /** Null without a stream of the fast tier's writes: linearizable reads then probe the fast tier's present. */
    private final Watch watch;
    /** How long the archive has been down (empty while it answers): such reads need it, so they do not wait for the feeder. */
    private final Supplier<Optional<Duration>> archiveUnreachableFor;

    /**
     * How reads passed the barrier so far: for metrics and benchmarks. {@code skipped}: point reads
     * that did not need it ({@link PointReadSkip}); {@code quiet}: linearizable reads whose namespaces had
     * no write the feeder had not mirrored ({@link UnmirroredWrites.Nothing}); {@code speculated}: linearizable reads
     * whose archive answer, asked while the fast tier's present was being read ({@link Speculation}), was kept;
     * {@code speculationsDropped}: speculative answers thrown away (those reads then passed as counted in the others).
     */
    public record Counts(
            long immediate,
            long probed,
            long waitedForFeeder,
            long timedOut,
            long skipped,
            long quiet,
            long speculated,
            long speculationsDropped) {}

    /**
     * This proxy's view of the fast tier's writes, the shared reads of the fast tier's present, every tiered
     * namespace, and how long a read waits for the stream to reach the present before it probes instead.
     */
    public record Watch(FastTierWrites writes, FastTierClock present, java.util.Set<String> tiered, Duration catchUp) {}

    /**
     * @param watch                 this proxy's stream of the fast tier's writes, or null: with it, linearizable reads
     *                              wait only for unmirrored writes to their namespaces ({@link UnmirroredWrites})
     * @param archiveUnreachableFor how long the archive has been out of service (empty while it answers): while it is,
     *                              reads that need it fail fast instead of waiting for a feeder that cannot mirror
     */
    public ReadBarrier(
            ReadConsistency mode,
            FastTierClock clock,
            MirrorProgress progress,
            Duration timeout,
            Watch watch,
            Supplier<Optional<Duration>> archiveUnreachableFor) {
        this.mode = mode;
        this.clock = clock;
        this.progress = progress;
        this.timeout = timeout;
        this.watch = watch;
        this.archiveUnreachableFor = Objects.requireNonNull(archiveUnreachableFor, "archiveUnreachableFor");
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
            String command, Collection<String> namespaces, BsonTimestamp trackedPoint, BsonTimestamp clientPoint)
            throws InterruptedException {
        refuseWhileArchiveOutOfService(command);
        long deadline = System.nanoTime() + timeout.toNanos();
        if (mode == ReadConsistency.LINEARIZABLE) {
            return linearizable(command, watched(deadline).decide(progress.known(), namespaces), deadline);
        }
        BsonTimestamp point = later(trackedPoint, clientPoint);
        boolean probe = clientPoint != null
                && !progress.known().covers(clientPoint)
                && (trackedPoint == null || clientPoint.compareTo(trackedPoint) > 0);
        if (probe) {
            point = later(trackedPoint, earlier(clientPoint, present(command, deadline)));
        }
        return mirrored(command, point, probe, deadline);
    }

    /**
     * A linearizable read of {@code namespaces} that may run on the archive before this barrier decides, or empty (the
     * read waits at {@link #await} as before). Taken only where that wait would pass at once as far as this proxy can
     * tell: the quiet path (a {@link Watch}), a pure read of known namespaces (one that may write, {@code $out} or
     * {@code $merge}, or read any namespace, is never run twice) and no write to them unmirrored in the stream
     * ({@link UnmirroredWrites#worthSpeculating}). Mirrored-through M is read now, before the caller asks the archive:
     * whatever M covers, the archive's answer reflects.
     *
     * @throws io.thermocline.proxy.backend.BackendUnavailableException while the archive is out of service
     */
    public Optional<Speculation> speculation(String command, Collection<String> namespaces) {
        refuseWhileArchiveOutOfService(command);
        Watch w = watch;
        MirroredThrough mirrored = progress.known();
        if (mode != ReadConsistency.LINEARIZABLE
                || w == null
                || namespaces == null
                || !UnmirroredWrites.worthSpeculating(w.writes().seen(), mirrored, namespaces)) {
            return Optional.empty();
        }
        return Optional.of(new Speculation(command, namespaces, mirrored, System.nanoTime() + timeout.toNanos()));
    }

    /**
     * A linearizable read whose archive query is sent right after this was made, while {@link #settle} reads the fast
     * tier's present P (the shared ping, started after the read arrived) and the stream through P. The answer is kept
     * when the stream, open since a point M covers, shows no write to the read's namespaces after M (M: mirrored-through
     * as read before the query was sent): every write to them acknowledged before the read arrived is at or before P,
     * so at or before M, and the archive held it when the query ran (docs/consistency.md, "Archive reads that ask the
     * archive while the present is read"). Otherwise the read passes the barrier as {@link #await} does, from the same
     * P and stream, and runs again.
     */
    public final class Speculation {
        private final String command;
        private final Collection<String> namespaces;
        private final MirroredThrough mirrored;
        private final long deadline;

        private Speculation(String command, Collection<String> namespaces, MirroredThrough mirrored, long deadline) {
            this.command = command;
            this.namespaces = namespaces;
            this.mirrored = mirrored;
            this.deadline = deadline;
        }

        /**
         * Whether the archive answer asked after this speculation was made may be kept. When it may not, the caller
         * drops it first, then passes the barrier with {@link Again#await} and asks the archive again.
         */
        public Settled settle() throws InterruptedException {
            Watched seen = watched(deadline);
            if (seen.decide(mirrored, namespaces) instanceof UnmirroredWrites.Nothing) {
                speculated.increment();
                return new Kept(through(mirrored));
            }
            speculationsDropped.increment();
            return new Again(command, seen.decide(progress.known(), namespaces), deadline);
        }
    }

    /** How a {@link Speculation} ended. */
    public sealed interface Settled permits Kept, Again {}

    /**
     * The speculative answer reflects every write the read must see; {@code through}: the reply's operationTime (the
     * archive held every write up to it when the answer was read), as {@link #await} returns it.
     */
    public record Kept(BsonTimestamp through) implements Settled {}

    /**
     * The speculative answer may miss a write the read must see: drop it (kill its cursor), {@link #await} the barrier,
     * then ask the archive again.
     */
    public final class Again implements Settled {
        private final String command;
        private final UnmirroredWrites.Verdict verdict;
        private final long deadline;

        private Again(String command, UnmirroredWrites.Verdict verdict, long deadline) {
            this.command = command;
            this.verdict = verdict;
            this.deadline = deadline;
        }

        /**
         * Waits as {@link ReadBarrier#await} does, from the same present and stream as the speculation.
         *
         * @return the reply's operationTime, as {@link ReadBarrier#await} returns it
         * @throws CausalWaitTimeout when the feeder or the fast tier did not answer in time (retryable)
         */
        public BsonTimestamp await() throws InterruptedException {
            return linearizable(command, verdict, deadline);
        }
    }

    private BsonTimestamp linearizable(String command, UnmirroredWrites.Verdict verdict, long deadline)
            throws InterruptedException {
        if (verdict instanceof UnmirroredWrites.Nothing) {
            quiet.increment();
            return through();
        }
        if (verdict instanceof UnmirroredWrites.WaitFor unmirrored) {
            return mirrored(command, unmirrored.latest(), false, deadline);
        }
        return mirrored(command, present(command, deadline), true, deadline);
    }

    /** Waits until mirrored-through covers {@code point}; {@code probed}: the point came from a probe of the present. */
    private BsonTimestamp mirrored(String command, BsonTimestamp point, boolean probed, long deadline)
            throws InterruptedException {
        if (progress.known().covers(point)) {
            (probed ? this.probed : immediate).increment();
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
        return through(progress.known());
    }

    private static BsonTimestamp through(MirroredThrough mirrored) {
        BsonTimestamp through = mirrored.clusterTime();
        return through.equals(MirroredThrough.NOTHING.clusterTime()) ? null : through;
    }

    /** How many reads waited for this proxy's write stream to reach the fast tier's present (0 when not watching). */
    public long streamWaits() {
        Watch w = watch;
        return w == null ? 0 : w.writes().waits();
    }

    public Counts counts() {
        return new Counts(
                immediate.sum(),
                probed.sum(),
                waited.sum(),
                timedOut.sum(),
                skipped.sum(),
                quiet.sum(),
                speculated.sum(),
                speculationsDropped.sum());
    }

    /**
     * The fast tier's present P, read after the read arrived, and the stream once it read through P (or as far as it
     * got within the watch's catch-up); {@code failure} when there is no stream or no P.
     */
    private record Watched(FastTierWrites.Seen seen, BsonTimestamp present, Collection<String> tiered, String failure) {

        /** What the read must wait for, with {@code mirrored} read before the archive is ({@link UnmirroredWrites}). */
        UnmirroredWrites.Verdict decide(MirroredThrough mirrored, Collection<String> namespaces) {
            return failure != null
                    ? new UnmirroredWrites.Unknown(failure)
                    : UnmirroredWrites.decide(seen, present, mirrored, namespaces, tiered);
        }
    }

    /**
     * What the stream shows up to the fast tier's present. The caller reads mirrored-through after it (or before, for a
     * {@link Speculation}), and before the archive answers: whatever it covers, the archive held when the read ran.
     */
    private Watched watched(long deadline) throws InterruptedException {
        Watch w = watch;
        if (w == null) {
            return new Watched(null, null, null, "not watching");
        }
        BsonTimestamp present;
        try {
            // a ping started after the read arrived: at or after every write the fast tier acknowledged before
            present = w.present().now().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return new Watched(null, null, w.tiered(), "no present: " + e);
        }
        long left = Math.max(0, deadline - System.nanoTime());
        FastTierWrites.Seen seen = w.writes()
                .awaitThrough(
                        present, Duration.ofNanos(Math.min(left, w.catchUp().toNanos())));
        return new Watched(seen, present, w.tiered(), null);
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
