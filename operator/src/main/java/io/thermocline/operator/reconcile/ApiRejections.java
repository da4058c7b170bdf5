package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.AggregatedOperatorException;
import io.javaoperatorsdk.operator.processing.dependent.workflow.WorkflowReconcileResult;
import io.thermocline.operator.workflow.RefusedUpdates;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Objects the API server refused (an immutable field changed, a value its own validation
 * rejects). They are reported in {@code ResourcesApplied} rather than failing the whole
 * reconcile, so the replica set and every other object stay managed (a refused update leaves
 * the object as it runs and the dependents after it are still reconciled: {@link RefusedUpdates}). Anything else (the API
 * server unreachable, a bug) still fails the reconcile and is retried with backoff.
 */
final class ApiRejections {

    private static final Logger LOG = Logger.getLogger(ApiRejections.class);

    private ApiRejections() {
    }

    /**
     * Runs the workflow; returns what the API server refused ("dependent: message"), throws for anything else. A refused
     * update ({@code refusedUpdates}) did not stop the dependents after it; a refused creation did.
     */
    static List<String> reconcile(Supplier<WorkflowReconcileResult> workflow, RefusedUpdates refusedUpdates) {
        Map<String, Exception> errors = new TreeMap<>();
        try {
            WorkflowReconcileResult result = workflow.get();
            result.getErroredDependents().forEach((dependent, error) -> errors.put(dependent.name(), error));
        } catch (AggregatedOperatorException e) {
            errors.putAll(e.getAggregatedExceptions());
        }
        List<String> rejected = new ArrayList<>();
        refusedUpdates.messages().forEach((name, message) -> {
            rejected.add(name + ": " + message);
            LOG.warnf("event=update-rejected dependent=%s", name);
        });
        errors.forEach((name, error) -> {
            KubernetesClientException refused = RefusedUpdates.refusal(error);
            if (refused == null) {
                throw new AggregatedOperatorException("the workflow failed", errors);
            }
            String detail = refused.getStatus() != null && refused.getStatus().getMessage() != null
                    ? refused.getStatus().getMessage() : refused.getMessage();
            rejected.add(name + ": " + detail);
            LOG.warnf("event=object-rejected dependent=%s code=%d", name, refused.getCode());
        });
        return rejected;
    }

}
