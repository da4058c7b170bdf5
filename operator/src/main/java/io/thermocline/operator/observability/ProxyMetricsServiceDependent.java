package io.thermocline.operator.observability;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.workflow.ClusterDependent;

/** {@code <cluster>-proxy-metrics}: every proxy replica's /metrics. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ProxyMetricsServiceDependent extends MetricsServiceDependent {

    public ProxyMetricsServiceDependent() {
        super(ProxyDeploymentDependent.COMPONENT);
    }
}
