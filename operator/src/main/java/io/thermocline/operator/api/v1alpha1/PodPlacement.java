package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Where a component's pods may run: the scheduling fields of a pod spec, as Kubernetes' own types. */
public class PodPlacement {

    @JsonPropertyDescription("Node labels the pods require (the pod spec's nodeSelector).")
    public Map<String, String> nodeSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("Tolerations of the pods.")
    public List<Toleration> tolerations = new ArrayList<>();

    @JsonPropertyDescription("Affinity of the pods. The fast tier without one puts its members on distinct nodes (fastTier.spreadMembers).")
    public Affinity affinity;

    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @JsonPropertyDescription("PriorityClass of the pods; empty: the cluster's default.")
    public String priorityClassName;

    @Size(max = 8)
    @JsonPropertyDescription("How the pods spread over zones or nodes. A constraint without labelSelector counts this component's own pods"
            + " of this cluster (its app.kubernetes.io/instance and app.kubernetes.io/component labels).")
    public List<TopologySpreadConstraint> topologySpreadConstraints = new ArrayList<>();
}
