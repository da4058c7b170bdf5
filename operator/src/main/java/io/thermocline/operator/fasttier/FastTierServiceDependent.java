package io.thermocline.operator.fasttier;

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

/** Headless Service giving each mongod a stable DNS name (the replica-set member host). */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class FastTierServiceDependent extends DrainHolderDependent<Service> {

    public FastTierServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        return new ServiceBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.fastTier(), FastTierStatefulSetDependent.COMPONENT))
                .withNewSpec()
                .withClusterIP("None")
                // members must resolve before they are ready, or the replica set can never form
                .withPublishNotReadyAddresses(true)
                .withSelector(layout.selector(FastTierStatefulSetDependent.COMPONENT))
                .addNewPort().withName("mongod").withPort(ClusterLayout.MONGOD_PORT).endPort()
                .endSpec()
                .build();
    }
}
