package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;

/** At most one fast-tier member down for voluntary disruptions, so a majority keeps a primary. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class FastTierDisruptionBudgetDependent extends ClusterDependent<PodDisruptionBudget> {

    public FastTierDisruptionBudgetDependent() {
        super(PodDisruptionBudget.class);
    }

    @Override
    protected PodDisruptionBudget desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        return new PodDisruptionBudgetBuilder()
                .withMetadata(metadata(desired, desired.layout().fastTier(), FastTierStatefulSetDependent.COMPONENT))
                .withNewSpec()
                .withMaxUnavailable(new IntOrString(1))
                .withSelector(new LabelSelectorBuilder()
                        .withMatchLabels(desired.layout().selector(FastTierStatefulSetDependent.COMPONENT)).build())
                .endSpec()
                .build();
    }
}
