package io.thermocline.tiering.metadata;

import java.time.Instant;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.state.MirroredThrough;
import io.thermocline.tiering.state.TieringState;
import java.util.HashMap;
import java.util.Map;

/** One consistent read of the shared state: every namespace's state and the feeder's checkpoint. */
public record TieringSnapshot(Map<String, NamespaceState> namespaces, FeederCheckpoint feeder, Instant readAt) {

    public TieringSnapshot {
        namespaces = Map.copyOf(namespaces);
    }

    public NamespaceState namespace(String namespace) {
        return namespaces.getOrDefault(namespace, NamespaceState.initial(namespace));
    }

    /** The part the router needs: coverage bounds and mirrored-through, as its value types. */
    public TieringState tieringState() {
        Map<String, CoverageBound> coverage = new HashMap<>();
        namespaces.forEach((namespace, state) -> coverage.put(namespace,
                state.oldestCovered() == null ? CoverageBound.nothing() : CoverageBound.from(state.oldestCovered())));
        return new TieringState(coverage, new MirroredThrough(feeder.mirroredThrough()));
    }
}
