package io.thermocline.operator.proxy;

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

/** Headless Service through which proxies find each other to forward getMore/killCursors to a cursor's owner. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ProxyPeersServiceDependent extends DrainHolderDependent<Service> {

    public ProxyPeersServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        return new ServiceBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.proxyPeers(), ProxyDeploymentDependent.COMPONENT))
                .withNewSpec()
                .withClusterIP("None")
                // a draining proxy still owns cursors; its peers must keep finding it
                .withPublishNotReadyAddresses(true)
                .withSelector(layout.selector(ProxyDeploymentDependent.COMPONENT))
                .addNewPort().withName("peer").withPort(ClusterLayout.PEER_PORT).endPort()
                .endSpec()
                .build();
    }
}
