package io.thermocline.operator.workflow;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDNoGCKubernetesDependentResource;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;

/**
 * An object the drain before deletion needs (the fast tier and its Service, the proxy and its
 * Services, the feeder, their config): it has <b>no</b> owner reference, so Kubernetes' garbage
 * collector cannot take it while the finalizer drains, whatever propagation the deletion asked for
 * ({@code kubectl delete --cascade=foreground} and Argo CD's prune delete owned objects before the
 * owner's finalizers have run). JOSDK maps it back to its resource by its primary-name annotations;
 * the operator deletes it itself once the drain is done ({@code reconcile.Deletion}). An object an
 * earlier operator version made, owner-referenced, loses the reference on the next reconcile.
 */
public abstract class DrainHolderDependent<R extends HasMetadata> extends CRUDNoGCKubernetesDependentResource<R, ThermoclineCluster> {

    protected DrainHolderDependent(Class<R> type) {
        super(type);
    }

    @Override
    protected final R desired(ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return desired(DesiredCluster.from(context), context);
    }

    protected abstract R desired(DesiredCluster desired, Context<ThermoclineCluster> context);

    @Override
    public Matcher.Result<R> match(R actual, R desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return ownedByCluster(actual) ? Matcher.Result.computed(false, desired) : super.match(actual, desired, primary, context);
    }

    @Override
    public R update(R actual, R desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        R updated = RefusedUpdates.attempt(context, name(), actual, () -> super.update(actual, desired, primary, context));
        if (!ownedByCluster(updated)) {
            return updated;
        }
        // an explicit edit: an update or apply that leaves the field out keeps a reference another field manager set
        return context.getClient().resource(updated).edit(r -> {
            r.getMetadata().getOwnerReferences().removeIf(ref -> ThermoclineCluster.KIND.equals(ref.getKind()));
            return r;
        });
    }

    static boolean ownedByCluster(HasMetadata object) {
        return object.getMetadata().getOwnerReferences() != null && object.getMetadata().getOwnerReferences().stream()
                .anyMatch(ref -> ThermoclineCluster.KIND.equals(ref.getKind()));
    }
}
