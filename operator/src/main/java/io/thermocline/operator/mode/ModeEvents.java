package io.thermocline.operator.mode;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.status.TransitionEvents;
import java.util.Objects;

/**
 * One Event per step of the fleet's mode: the request written, a refusal (once per request), and each
 * phase the fleet reaches (once per epoch). Each Event's name derives from what it reports, so a
 * reconcile that runs again after a failed status write does not send it twice.
 */
public final class ModeEvents {

    public static final String MODE_REQUESTED = "ModeRequested";
    public static final String SHADOW_STARTED = "ShadowStarted";
    public static final String CUT_OVER = "CutOver";
    public static final String DRAIN_STARTED = "DrainStarted";
    public static final String DRAINED = "Drained";

    private ModeEvents() {
    }

    static void requested(KubernetesClient client, ThermoclineCluster cluster, ModeRequest request, String why) {
        TransitionEvents.once(client, cluster, MODE_REQUESTED, "mode " + request.mode().value()
                + (request.override() ? " with override (no shadow evidence needed)" : "") + " requested " + why, true,
                MODE_REQUESTED + "/" + request.mode().value() + "/" + request.override() + "/" + cluster.getMetadata().getGeneration());
    }

    /** The Events between what status said before and now. */
    static void transitions(KubernetesClient client, ThermoclineCluster cluster, ModeStatus before, ModeStatus now) {
        if (now.refusal != null && (before == null || before.refusal == null || !Objects.equals(before.requestedAt, now.requestedAt))) {
            String reason = ClusterMode.TIERED.value().equals(now.requested) && ClusterMode.SHADOW.value().equals(now.active)
                    ? ModeConditions.CUTOVER_REFUSED : ModeConditions.MODE_REFUSED;
            TransitionEvents.once(client, cluster, reason, now.requested + " refused: " + now.refusal, false,
                    reason + "/" + now.requested + "/" + now.requestedAt);
        }
        if (before == null || before.phase == null || now.phase == null
                || before.phase.equals(now.phase) && Objects.equals(before.epoch, now.epoch)) {
            return;
        }
        String reason = switch (now.phase) {
            case ModeDocument.PHASE_SHADOWING -> SHADOW_STARTED;
            case ModeDocument.PHASE_CUTTING_OVER -> ModeConditions.CUTTING_OVER;
            case ModeDocument.PHASE_TIERED -> CUT_OVER;
            case ModeDocument.PHASE_DRAINING -> DRAIN_STARTED;
            case ModeDocument.PHASE_DRAINED -> DRAINED;
            default -> null;
        };
        if (reason != null) {
            TransitionEvents.once(client, cluster, reason, "the fleet went from " + before.active + " (" + before.phase + ") to "
                    + now.active + " (" + now.phase + ")", true,
                    reason + "/" + now.epoch + "/" + now.phase);
        }
    }
}
