package io.thermocline.operator.scheduling;

import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.thermocline.operator.api.v1alpha1.PodPlacement;
import java.util.List;
import java.util.Map;

/** A component's {@link PodPlacement} on its pod spec. */
public final class PodScheduling {

    private PodScheduling() {
    }

    /**
     * Sets the placement's fields on {@code pod}, the affinity only when the placement has one (the caller may have a default).
     * {@code ownPods}: the component's selector, given to a spread constraint that names no pods (it would count none).
     */
    public static PodSpecBuilder apply(PodSpecBuilder pod, PodPlacement placement, Map<String, String> ownPods) {
        if (placement == null) {
            return pod;
        }
        pod.withNodeSelector(placement.nodeSelector).withTolerations(placement.tolerations)
                .withPriorityClassName(placement.priorityClassName)
                .withTopologySpreadConstraints(spread(placement.topologySpreadConstraints, ownPods));
        if (placement.affinity != null) {
            pod.withAffinity(placement.affinity);
        }
        return pod;
    }

    static List<TopologySpreadConstraint> spread(List<TopologySpreadConstraint> constraints, Map<String, String> ownPods) {
        if (constraints == null) {
            return List.of();
        }
        return constraints.stream().map(c -> c.getLabelSelector() != null ? c
                : new TopologySpreadConstraintBuilder(c).withNewLabelSelector().withMatchLabels(ownPods).endLabelSelector().build())
                .toList();
    }
}
