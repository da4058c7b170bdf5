package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.Updater;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.workflow.DesiredCluster;

/**
 * A Secret the fast tier's data cannot live without (keyfile, users). It has no owner
 * reference, so deleting the resource never garbage-collects it while the volumes stay
 * ({@code retentionPolicy: Retain}): a re-created resource of the same name finds it (JOSDK
 * maps it back by its primary-name annotations) and resumes with the same credentials.
 * With {@code Delete} the operator removes it itself, after the drain.
 */
abstract class RetainedSecretDependent extends KubernetesDependentResource<Secret, ThermoclineCluster>
        implements Creator<Secret, ThermoclineCluster>, Updater<Secret, ThermoclineCluster> {

    RetainedSecretDependent() {
        super(Secret.class);
    }

    @Override
    protected final Secret desired(ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return desired(DesiredCluster.from(context), context);
    }

    protected abstract Secret desired(DesiredCluster desired, Context<ThermoclineCluster> context);
}
