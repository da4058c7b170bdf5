package io.thermocline.operator.observability;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.tiering.EvictorCronJobDependent;
import io.thermocline.operator.workflow.ClusterDependent;

/** {@code <cluster>-evictor-metrics}: each eviction pass's /metrics while it runs (a pass that ends between two scrapes is not seen; its outcome is in the Job's logs). */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class EvictorMetricsServiceDependent extends MetricsServiceDependent {

    public EvictorMetricsServiceDependent() {
        super(EvictorCronJobDependent.COMPONENT);
    }
}
