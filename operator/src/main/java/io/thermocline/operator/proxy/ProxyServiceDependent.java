package io.thermocline.operator.proxy;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ExposeSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DrainHolderDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.LinkedHashMap;

/**
 * The Service applications connect to instead of the archive; {@code spec.proxy.expose} makes it a NodePort or
 * LoadBalancer Service for clients outside the cluster. The peers' headless Service stays internal.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ProxyServiceDependent extends DrainHolderDependent<Service> {

    public ProxyServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        ExposeSpec expose = desired.spec().proxy.expose == null ? new ExposeSpec() : desired.spec().proxy.expose;
        ObjectMeta metadata = ClusterDependent.metadata(desired, layout.proxy(), ProxyDeploymentDependent.COMPONENT);
        if (expose.annotations != null && !expose.annotations.isEmpty()) {
            metadata.setAnnotations(new LinkedHashMap<>(expose.annotations));
        }
        boolean external = !ExposeSpec.CLUSTER_IP.equals(expose.type);
        return new ServiceBuilder()
                .withMetadata(metadata)
                .withNewSpec()
                .withType(expose.type == null ? ExposeSpec.CLUSTER_IP : expose.type)
                .withLoadBalancerSourceRanges(ExposeSpec.LOAD_BALANCER.equals(expose.type) ? expose.loadBalancerSourceRanges : null)
                .withExternalTrafficPolicy(external ? expose.externalTrafficPolicy : null)
                .withSelector(layout.selector(ProxyDeploymentDependent.COMPONENT))
                .addNewPort().withName("mongodb").withPort(desired.spec().proxy.port)
                .withTargetPort(new IntOrString(ClusterLayout.MONGOD_PORT)).endPort()
                .endSpec()
                .build();
    }
}
