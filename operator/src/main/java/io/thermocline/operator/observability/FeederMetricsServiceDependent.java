package io.thermocline.operator.observability;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.tiering.FeederDeploymentDependent;
import io.thermocline.operator.workflow.ClusterDependent;

/** {@code <cluster>-feeder-metrics}: the feeder's /metrics (lag, pending events, mirrored writes). */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class FeederMetricsServiceDependent extends MetricsServiceDependent {

    public FeederMetricsServiceDependent() {
        super(FeederDeploymentDependent.COMPONENT);
    }
}
