package io.thermocline.operator.observability;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.tiering.WarmerJobDependent;
import io.thermocline.operator.workflow.ClusterDependent;

/** {@code <cluster>-warmer-metrics}: the warming run's /metrics while it runs (copied documents, barrier waits). */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class WarmerMetricsServiceDependent extends MetricsServiceDependent {

    public WarmerMetricsServiceDependent() {
        super(WarmerJobDependent.COMPONENT);
    }
}
