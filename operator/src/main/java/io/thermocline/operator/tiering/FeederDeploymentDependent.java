package io.thermocline.operator.tiering;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DrainHolderDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.Map;

/** The feeder: exactly one replica (Recreate), since two feeders on one change stream would race. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class FeederDeploymentDependent extends DrainHolderDependent<Deployment> {

    public static final String COMPONENT = "feeder";

    public FeederDeploymentDependent() {
        super(Deployment.class);
    }

    @Override
    protected Deployment desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        var feeder = DataPlaneContainer.withMetrics(DataPlaneContainer.container(desired, "feeder", desired.spec().feeder.resources))
                .build();
        return new DeploymentBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.feeder(), COMPONENT))
                .withNewSpec()
                .withReplicas(desired.feederStopped() ? 0 : 1)
                .withNewStrategy().withType("Recreate").endStrategy()
                .withNewSelector().withMatchLabels(layout.selector(COMPONENT)).endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(layout.labels(COMPONENT))
                .withAnnotations(Map.of(ProxyDeploymentDependent.CONFIG_HASH, desired.configHash(),
                        ProxyDeploymentDependent.ARCHIVE_SECRET_HASH, desired.archiveSecretHash()))
                .endMetadata()
                .withSpec(DataPlaneContainer.podSpec(desired, feeder, desired.spec().feeder, COMPONENT).build())
                .endTemplate()
                .endSpec()
                .build();
    }
}
