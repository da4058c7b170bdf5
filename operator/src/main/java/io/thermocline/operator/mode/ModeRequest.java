package io.thermocline.operator.mode;

import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;

/** What the operator writes into the mode document: {@code requested}, {@code override}, {@code requestedBy}. */
public record ModeRequest(ClusterMode mode, boolean override, String requestedBy) {

    public static final String BY_OPERATOR = "operator";

    /** The request of a spec that names its mode (an unset one is {@link StartingMode}'s to choose). */
    public static ModeRequest of(ThermoclineClusterSpec spec) {
        return new ModeRequest(java.util.Objects.requireNonNull(spec.mode, "spec.mode"), spec.modeOverride, BY_OPERATOR);
    }

    /** The request deletion writes: hand the archive back before anything is removed. */
    public static ModeRequest drainForDeletion() {
        return new ModeRequest(ClusterMode.DRAINING, false, BY_OPERATOR);
    }

    /** Whether the document already carries this request (a missing document carries none). */
    public boolean writtenIn(ModeDocument document) {
        return mode.value().equals(document.requested()) && override == document.override();
    }
}
