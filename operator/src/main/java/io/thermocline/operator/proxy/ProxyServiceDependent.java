package io.thermocline.operator.proxy;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DrainHolderDependent;
import io.thermocline.operator.workflow.DesiredCluster;

/** The Service applications connect to instead of the archive. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ProxyServiceDependent extends DrainHolderDependent<Service> {

    public ProxyServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        return new ServiceBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.proxy(), ProxyDeploymentDependent.COMPONENT))
                .withNewSpec()
                .withType("ClusterIP")
                .withSelector(layout.selector(ProxyDeploymentDependent.COMPONENT))
                .addNewPort().withName("mongodb").withPort(desired.spec().proxy.port)
                .withTargetPort(new IntOrString(ClusterLayout.MONGOD_PORT)).endPort()
                .endSpec()
                .build();
    }
}
