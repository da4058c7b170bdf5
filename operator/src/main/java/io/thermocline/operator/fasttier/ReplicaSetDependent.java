package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.api.reconciler.dependent.ReconcileResult;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.Optional;

/**
 * The fast tier's replica-set configuration as an external (non-Kubernetes) dependent of the
 * workflow: reconciled after the StatefulSet, one {@link ReplicaSetSteps} step per reconcile. The
 * proxy, feeder, evictor and warmer depend on it through {@link Ready}, so they are first created
 * once the set is initiated and its data-plane user exists, instead of crash-looping until then.
 */
public class ReplicaSetDependent implements DependentResource<ReplicaSetState, ThermoclineCluster> {

    /** Its name in the workflow: JOSDK keys the workflow's nodes by {@link #name()}, so it must match {@code @Dependent(name)}. */
    public static final String NAME = "replica-set";
    private static final String RUN = ReplicaSetDependent.class.getName() + ".run";
    private static final String STATE = ReplicaSetDependent.class.getName() + ".state";

    /** What this reconcile is to do: set by the reconciler before the workflow; {@code target} null when no pod runs yet. */
    public record Run(ReplicaSetConnector connector, ReplicaSetTarget target) {
        public void putInto(Context<ThermoclineCluster> context) {
            context.managedWorkflowAndDependentResourceContext().put(RUN, this);
        }
    }

    @Override
    public ReconcileResult<ReplicaSetState> reconcile(ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        Run run = context.managedWorkflowAndDependentResourceContext().getMandatory(RUN, Run.class);
        if (run.target() == null) {
            return ReconcileResult.noOperation(new ReplicaSetState.Converging("ReplicaSetPending", "no member runs yet"));
        }
        ReplicaSetState state = new ReplicaSetSteps(run.connector()).next(run.target());
        context.managedWorkflowAndDependentResourceContext().put(STATE, state);
        return ReconcileResult.resourceUpdated(state);
    }

    /** This reconcile's step; null when the workflow did not reach it (nothing runs yet, or the workflow was held). */
    public static ReplicaSetState stepOf(Context<ThermoclineCluster> context) {
        return context.managedWorkflowAndDependentResourceContext().get(STATE, ReplicaSetState.class).orElse(null);
    }

    @Override
    public Optional<ReplicaSetState> getSecondaryResource(ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return Optional.ofNullable(stepOf(context));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Class<ReplicaSetState> resourceType() {
        return ReplicaSetState.class;
    }

    @Override
    public boolean isDeletable() {
        return false;
    }

    /**
     * The data plane may start: the set converged (initiated, members configured, its user ensured), or
     * it did before (the proxy Deployment exists), so a later reconfiguration or a pause still updates them.
     */
    public static class Ready implements Condition<ReplicaSetState, ThermoclineCluster> {
        @Override
        public boolean isMet(DependentResource<ReplicaSetState, ThermoclineCluster> dependent, ThermoclineCluster primary,
                Context<ThermoclineCluster> context) {
            if (stepOf(context) instanceof ReplicaSetState.Converged) {
                return true;
            }
            String proxy = ClusterLayout.of(primary).proxy();
            return context.getSecondaryResourcesAsStream(Deployment.class)
                    .anyMatch(d -> d.getMetadata().getName().equals(proxy));
        }
    }
}
