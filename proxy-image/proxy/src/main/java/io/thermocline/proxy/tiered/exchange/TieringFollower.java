package io.thermocline.proxy.tiered.exchange;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.causal.MirrorProgress;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.tiering.metadata.StateFollower;
import io.thermocline.tiering.metadata.StateFreshness;
import io.thermocline.tiering.metadata.TieringSnapshot;
import io.thermocline.tiering.state.TieringState;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this proxy's {@link RoutingTable} in step with the shared tiering state: every snapshot the
 * {@link StateFollower} reads becomes a new immutable table (coverage bounds) and feeds the
 * feeder's mirrored-through into {@link MirrorProgress}. Until the first snapshot arrives nothing is
 * covered, so every read goes to the archive: slow, never wrong.
 *
 * <p>Fail closed on a stale view: the evictor deletes under a raised bound only a propagation delay
 * after raising it, so the bounds are trusted only while the last successful read of the state began
 * less than that delay ago ({@link #decide()} otherwise hands out a table that covers nothing), and a
 * fast-tier answer is trusted only if the view stayed fresh and no bound seen since the decision
 * would have routed it elsewhere ({@link #stillServes}).
 */
public final class TieringFollower {

    private static final Logger LOG = LoggerFactory.getLogger(TieringFollower.class);
    /** Coverage changes remembered for {@link #stillServes}; a decision older than all of them is not trusted. */
    private static final int HISTORY = 16;

    /**
     * The table a command was decided with.
     *
     * @param version          how many coverage changes this follower had applied when the table was taken
     * @param readStartedNanos when a read of the state no older than the table began
     */
    public record Decided(RoutingTable table, long version, long readStartedNanos) {}

    private record Applied(long version, RoutingTable table) {}

    private final List<CollectionPolicy> policies;
    private final MirrorProgress progress;
    private final StateFreshness freshness;
    private final LongSupplier clock;
    private final Deque<Applied> history = new ArrayDeque<>();
    private volatile RoutingTable table;
    private long version;
    private volatile boolean stale = true;

    public TieringFollower(List<CollectionPolicy> policies, StateFollower follower, MirrorProgress progress) {
        this(policies, follower, progress, System::nanoTime);
        follower.onChange(this::apply);
        apply(follower.current());
    }

    TieringFollower(
            List<CollectionPolicy> policies, StateFreshness freshness, MirrorProgress progress, LongSupplier clock) {
        this.policies = List.copyOf(policies);
        this.progress = progress;
        this.freshness = freshness;
        this.clock = clock;
        this.table = RoutingTable.of(policies, TieringState.initial());
    }

    /** The current table as routing must use it: nothing covered while the view of the state is stale. */
    public RoutingTable table() {
        return decide().table();
    }

    /** The table to decide a command with, and what {@link #stillServes} needs to check the answer later. */
    public Decided decide() {
        long read = freshness.readStartedNanos();
        RoutingTable current;
        long at;
        synchronized (this) {
            current = table;
            at = version;
        }
        if (!freshness.fresh(clock.getAsLong())) {
            if (!stale) {
                stale = true;
                LOG.warn(
                        "event=tiering_state_stale action=route_to_archive reason=\"no successful read of thermocline.state"
                                + " within the propagation delay\"");
            }
            return new Decided(
                    current.withState(new TieringState(Map.of(), current.state().mirroredThrough())), at, read);
        }
        if (stale) {
            stale = false;
            LOG.info("event=tiering_state_fresh");
        }
        return new Decided(current, at, read);
    }

    /**
     * True when an answer the fast tier gave for a command decided with {@code decided} (and
     * still-fast by {@code servesFast} on that table) can be trusted now: the view is fresh, it has had no gap
     * since the decision, and every coverage seen since would still have sent the command to the fast tier.
     * Then no evictor can have deleted a document the answer needs before the answer was read.
     */
    public boolean stillServes(Decided decided, Predicate<RoutingTable> servesFast) {
        if (!freshness.fresh(clock.getAsLong()) || freshness.unbrokenSinceNanos() > decided.readStartedNanos()) {
            return false;
        }
        synchronized (this) {
            if (version == decided.version()) {
                return true;
            }
            if (history.isEmpty() || history.peekFirst().version() > decided.version() + 1) {
                return false;
            }
            for (Applied applied : history) {
                if (applied.version() > decided.version() && !servesFast.test(applied.table())) {
                    return false;
                }
            }
            return true;
        }
    }

    void apply(TieringSnapshot snapshot) {
        TieringState state = snapshot.tieringState();
        progress.observed(state.mirroredThrough());
        RoutingTable next = RoutingTable.of(policies, new TieringState(state.coverage(), progress.known()));
        synchronized (this) {
            RoutingTable previous = table;
            table = next;
            if (!previous.state().coverage().equals(next.state().coverage())) {
                version++;
                history.addLast(new Applied(version, next));
                if (history.size() > HISTORY) {
                    history.removeFirst();
                }
                LOG.info("event=coverage_changed coverage={}", next.state().coverage());
            }
        }
    }
}
