package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.tiering.EvictorCronJobDependent;
import io.thermocline.operator.tiering.FeederDeploymentDependent;
import io.thermocline.operator.tiering.WarmerJobDependent;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code <cluster>-fast}: only this cluster's proxy, workers and one-shot Jobs (backup points, restore steps), the other members (replication)
 * and the operator (initiation, reconfiguration, the drain check) reach mongod. Applications go
 * through the proxy; the fast tier holds a copy of their data without their users' rights.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class FastTierNetworkPolicyDependent extends ClusterDependent<NetworkPolicy> {

    /** The label of the operator's pods (examples/install, the Helm chart). */
    public static final String OPERATOR_POD_LABEL = "app.kubernetes.io/name";

    public static final String OPERATOR_POD_VALUE = "thermocline-operator";
    static final List<String> CLIENTS = List.of(
            FastTierStatefulSetDependent.COMPONENT,
            ProxyDeploymentDependent.COMPONENT,
            FeederDeploymentDependent.COMPONENT,
            EvictorCronJobDependent.COMPONENT,
            WarmerJobDependent.COMPONENT,
            ClusterLayout.BACKUP_POINT_COMPONENT,
            ClusterLayout.RESTORE_COMPONENT);

    public FastTierNetworkPolicyDependent() {
        super(NetworkPolicy.class);
    }

    @Override
    protected NetworkPolicy desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        List<NetworkPolicyPeer> from = new ArrayList<>();
        for (String component : CLIENTS) {
            from.add(new NetworkPolicyPeerBuilder()
                    .withPodSelector(new LabelSelectorBuilder()
                            .withMatchLabels(layout.selector(component))
                            .build())
                    .build());
        }
        LabelSelectorBuilder operatorNamespace = new LabelSelectorBuilder();
        if (desired.operatorNamespace() != null) {
            operatorNamespace.addToMatchLabels("kubernetes.io/metadata.name", desired.operatorNamespace());
        }
        from.add(new NetworkPolicyPeerBuilder()
                .withNamespaceSelector(operatorNamespace.build())
                .withPodSelector(new LabelSelectorBuilder()
                        .addToMatchLabels(OPERATOR_POD_LABEL, OPERATOR_POD_VALUE)
                        .build())
                .build());
        return new NetworkPolicyBuilder()
                .withMetadata(metadata(desired, layout.fastTier(), FastTierStatefulSetDependent.COMPONENT))
                .withNewSpec()
                .withNewPodSelector()
                .withMatchLabels(layout.selector(FastTierStatefulSetDependent.COMPONENT))
                .endPodSelector()
                .withPolicyTypes("Ingress")
                .addNewIngress()
                .withFrom(from)
                .addNewPort()
                .withProtocol("TCP")
                .withPort(new IntOrString(ClusterLayout.MONGOD_PORT))
                .endPort()
                .endIngress()
                .endSpec()
                .build();
    }
}
