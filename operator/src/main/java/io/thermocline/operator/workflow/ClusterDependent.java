package io.thermocline.operator.workflow;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;

/**
 * A Kubernetes object owned by a ThermoclineCluster: built from {@link DesiredCluster},
 * labelled with the instance and component, owner-referenced by JOSDK (so deleting the
 * resource garbage-collects it).
 */
public abstract class ClusterDependent<R extends HasMetadata> extends CRUDKubernetesDependentResource<R, ThermoclineCluster> {

    /** The label selector every dependent's informer uses: only objects this operator made. */
    public static final String MANAGED = "app.kubernetes.io/managed-by=thermocline-operator";

    protected ClusterDependent(Class<R> type) {
        super(type);
    }

    @Override
    protected final R desired(ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return desired(DesiredCluster.from(context), context);
    }

    protected abstract R desired(DesiredCluster desired, Context<ThermoclineCluster> context);

    /** A refused update keeps the object as it runs and lets the workflow go on ({@link RefusedUpdates}). */
    @Override
    public R update(R actual, R desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return RefusedUpdates.attempt(context, name(), actual, () -> super.update(actual, desired, primary, context));
    }

    public static ObjectMeta metadata(DesiredCluster desired, String name, String component) {
        return new ObjectMetaBuilder()
                .withName(name)
                .withNamespace(desired.layout().namespace())
                .withLabels(desired.layout().labels(component))
                .build();
    }
}
