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

/** Voluntary disruptions never take more members than the majority can spare: a majority keeps a primary. */
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
                .withMaxUnavailable(new IntOrString(maxUnavailable(desired.spec().fastTier.members)))
                .withSelector(new LabelSelectorBuilder()
                        .withMatchLabels(desired.layout().selector(FastTierStatefulSetDependent.COMPONENT)).build())
                .endSpec()
                .build();
    }

    /**
     * members - majority: 1 of 3 or 4, 2 of 5 or 6, 3 of 7. One or two members have no member to spare: any one down stops
     * writes, whether a drain evicts it or its node fails. A budget of 0 would not keep them writable, only make every node
     * drain and cluster upgrade hang until someone deletes the budget; so one at a time may go (the docs and the members
     * field say what 1 or 2 members cost).
     */
    static int maxUnavailable(int members) {
        return Math.max(1, members - (members / 2 + 1));
    }
}
