package io.thermocline.operator.reconcile;

import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.status.Observed;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.List;

/**
 * What the dependent-resource workflow did in one reconcile. {@code desired} null: the workflow was held (an invalid
 * spec, or no fast-tier version yet), and nothing else ran; {@code replicaSet}: the replica-set step taken, null when
 * none; {@code rejected}: what the API server refused (and volumes not resized); {@code certificates}: the fast tier's
 * TLS condition.
 */
record WorkflowOutcome(
        DesiredCluster desired, ReplicaSetState replicaSet, List<String> rejected, Observed certificates) {

    static final WorkflowOutcome HELD = new WorkflowOutcome(null, null, List.of(), null);

    WorkflowOutcome {
        rejected = List.copyOf(rejected);
    }

    boolean ran() {
        return desired != null;
    }
}
