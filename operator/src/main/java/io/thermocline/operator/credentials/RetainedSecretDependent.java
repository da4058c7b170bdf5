package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.Updater;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.workflow.DesiredCluster;

/**
 * A Secret the fast tier's data cannot live without (keyfile, users). It has no owner
 * reference, so deleting the resource never garbage-collects it while the volumes stay
 * ({@code retentionPolicy: Retain}): a re-created resource of the same name finds it (JOSDK
 * maps it back by its primary-name annotations) and resumes with the same credentials.
 * With {@code Delete} the operator removes it itself, after the drain. A Secret made by an
 * earlier operator version, owner-referenced to the resource, loses that reference on the next
 * reconcile (else deleting the resource would still garbage-collect it).
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

    @Override
    public Matcher.Result<Secret> match(Secret actual, Secret desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return ownedBy(actual, primary) ? Matcher.Result.computed(false, desired) : super.match(actual, desired, primary, context);
    }

    @Override
    public Secret update(Secret actual, Secret desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        Secret current = actual;
        if (ownedBy(actual, primary)) {
            // an explicit edit: an apply that leaves the field out would not remove a reference another field manager set
            current = context.getClient().secrets().inNamespace(actual.getMetadata().getNamespace())
                    .withName(actual.getMetadata().getName()).edit(s -> {
                        s.getMetadata().getOwnerReferences().removeIf(ref -> ThermoclineCluster.KIND.equals(ref.getKind()));
                        return s;
                    });
        }
        return super.update(current, desired, primary, context);
    }

    private static boolean ownedBy(Secret secret, ThermoclineCluster primary) {
        return secret.getMetadata().getOwnerReferences() != null && secret.getMetadata().getOwnerReferences().stream()
                .anyMatch(ref -> ThermoclineCluster.KIND.equals(ref.getKind()));
    }
}
