package io.thermocline.proxy.tiered;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.causal.MirrorProgress;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.tiering.metadata.StateFollower;
import io.thermocline.tiering.metadata.TieringSnapshot;
import io.thermocline.tiering.state.TieringState;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this proxy's {@link RoutingTable} in step with the shared tiering state: every snapshot the
 * {@link StateFollower} reads becomes a new immutable table (coverage bounds) and feeds the
 * feeder's mirrored-through into {@link MirrorProgress}. Until the first snapshot arrives nothing is
 * covered, so every read goes to the archive: slow, never wrong.
 */
public final class TieringFollower {

    private static final Logger LOG = LoggerFactory.getLogger(TieringFollower.class);

    private final List<CollectionPolicy> policies;
    private final MirrorProgress progress;
    private volatile RoutingTable table;

    public TieringFollower(List<CollectionPolicy> policies, StateFollower follower, MirrorProgress progress) {
        this.policies = List.copyOf(policies);
        this.progress = progress;
        this.table = RoutingTable.of(policies, TieringState.initial());
        follower.onChange(this::apply);
        apply(follower.current());
    }

    public RoutingTable table() {
        return table;
    }

    void apply(TieringSnapshot snapshot) {
        TieringState state = snapshot.tieringState();
        progress.observed(state.mirroredThrough());
        RoutingTable previous = table;
        table = RoutingTable.of(policies, new TieringState(state.coverage(), progress.known()));
        if (!previous.state().coverage().equals(table.state().coverage())) {
            LOG.info("event=coverage_changed coverage={}", table.state().coverage());
        }
    }
}
