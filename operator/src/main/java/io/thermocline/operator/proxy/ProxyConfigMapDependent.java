package io.thermocline.operator.proxy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DrainHolderDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.Map;

/** The data plane's config file, rendered with its own schema; shared by proxy, feeder, evictor and warmer. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ProxyConfigMapDependent extends DrainHolderDependent<ConfigMap> {

    public ProxyConfigMapDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        return new ConfigMapBuilder()
                .withMetadata(ClusterDependent.metadata(desired, desired.layout().config(), ProxyDeploymentDependent.COMPONENT))
                .withData(Map.of(ClusterLayout.CONFIG_FILE, desired.configYaml()))
                .build();
    }
}
