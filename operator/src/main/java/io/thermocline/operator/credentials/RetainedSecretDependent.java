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
 *
 * <p>Create-only, as JOSDK's {@code mysql-schema} sample keeps its generated password: {@link #desired}
 * generates new material every time, but it is only ever used to create the Secret; an existing one
 * always matches, so its data is never replaced. A cache that has not seen an existing Secret yet
 * makes JOSDK create it again, which the API server refuses (JOSDK creates with
 * {@code resourceVersion} set, a conflict when it exists), so a live password is never overwritten.
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
        return Matcher.Result.computed(!ownedBy(actual, primary), actual);
    }

    /** Only the owner reference of an earlier operator's Secret goes; the data stays as it is. */
    @Override
    public Secret update(Secret actual, Secret desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        // an explicit edit: an apply that leaves the field out would not remove a reference another field manager set
        return context.getClient().secrets().inNamespace(actual.getMetadata().getNamespace())
                .withName(actual.getMetadata().getName()).edit(s -> {
                    s.getMetadata().getOwnerReferences().removeIf(ref -> ThermoclineCluster.KIND.equals(ref.getKind()));
                    return s;
                });
    }

    private static boolean ownedBy(Secret secret, ThermoclineCluster primary) {
        return secret.getMetadata().getOwnerReferences() != null && secret.getMetadata().getOwnerReferences().stream()
                .anyMatch(ref -> ThermoclineCluster.KIND.equals(ref.getKind()));
    }
}
