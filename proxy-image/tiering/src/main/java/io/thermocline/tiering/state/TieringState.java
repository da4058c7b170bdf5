package io.thermocline.tiering.state;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One immutable snapshot of the shared tiering state every proxy follows: the coverage bound of
 * each tiered namespace ({@code db.coll}) and how far the feeder has mirrored. The feeder tails one
 * change stream over all tiered namespaces, so mirrored-through is one value, not one per namespace.
 */
public record TieringState(Map<String, CoverageBound> coverage, MirroredThrough mirroredThrough) {

    public TieringState {
        coverage = Map.copyOf(Objects.requireNonNull(coverage, "coverage"));
        Objects.requireNonNull(mirroredThrough, "mirroredThrough");
    }

    /** Nothing covered anywhere, nothing mirrored: the state of a freshly adopted archive. */
    public static TieringState initial() {
        return new TieringState(Map.of(), MirroredThrough.NOTHING);
    }

    /** The namespace's bound; a namespace with no recorded bound proves nothing. */
    public CoverageBound coverage(String namespace) {
        return coverage.getOrDefault(namespace, CoverageBound.NOTHING);
    }

    public TieringState withCoverage(String namespace, CoverageBound bound) {
        Map<String, CoverageBound> next = new TreeMap<>(coverage);
        next.put(Objects.requireNonNull(namespace, "namespace"), Objects.requireNonNull(bound, "bound"));
        return new TieringState(next, mirroredThrough);
    }

    /** Mirrored-through only moves forward, whatever order the reports arrive in. */
    public TieringState withMirroredThrough(MirroredThrough reported) {
        return new TieringState(coverage, mirroredThrough.atLeast(reported));
    }
}
