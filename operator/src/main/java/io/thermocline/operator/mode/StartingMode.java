package io.thermocline.operator.mode;

import io.thermocline.operator.api.v1alpha1.ClusterMode;
import java.util.List;
import java.util.Optional;

/**
 * The mode a new cluster starts in when {@code spec.mode} is unset: shadow over an archive whose tiered
 * collections already hold documents (the archive keeps answering while the fast tier fills and is compared),
 * and also when they cannot be read (the safe side); tiered only where there is nothing to compare. Decided once,
 * when the fast tier has no mode document yet: afterwards an unset {@code spec.mode} keeps what the fleet has.
 */
public record StartingMode(ClusterMode mode, String reason) {

    private static final int NAMED = 3;

    /** {@code holdingData}: which of {@code tiered} hold documents in the archive; empty when it could not be asked. */
    public static StartingMode of(List<String> tiered, Optional<List<String>> holdingData) {
        if (tiered.isEmpty()) {
            return new StartingMode(ClusterMode.TIERED, "spec.mode is unset and no collection is tiered: nothing to compare, so the"
                    + " cluster started tiered");
        }
        if (holdingData.isEmpty()) {
            return new StartingMode(ClusterMode.SHADOW, "spec.mode is unset and the archive's tiered collections could not be read,"
                    + " so the cluster started in shadow, the safe side; set spec.mode: tiered to cut over once status.mode.shadow"
                    + " has the evidence");
        }
        List<String> holding = holdingData.get();
        if (holding.isEmpty()) {
            return new StartingMode(ClusterMode.TIERED, "spec.mode is unset and the archive's tiered collections were empty:"
                    + " nothing to compare, so the cluster started tiered");
        }
        String named = String.join(", ", holding.subList(0, Math.min(NAMED, holding.size())))
                + (holding.size() > NAMED ? " and " + (holding.size() - NAMED) + " more" : "");
        return new StartingMode(ClusterMode.SHADOW, "spec.mode is unset and the archive already held documents in " + named
                + ", so the cluster started in shadow (the archive answers everything while the fast tier fills and is"
                + " compared); set spec.mode: tiered to cut over once status.mode.shadow has the evidence");
    }
}
