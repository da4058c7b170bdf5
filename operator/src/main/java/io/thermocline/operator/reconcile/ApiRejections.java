package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.dependent.workflow.WorkflowReconcileResult;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Objects the API server refused (an immutable field changed, a value its own validation
 * rejects). They are reported in {@code ResourcesApplied} rather than failing the whole
 * reconcile, so the replica set and every other object stay managed. Anything else (the API
 * server unreachable, a bug) still fails the reconcile and is retried with backoff.
 */
final class ApiRejections {

    private static final Logger LOG = Logger.getLogger(ApiRejections.class);
    private static final int UNPROCESSABLE = 422;
    private static final int BAD_REQUEST = 400;

    private ApiRejections() {
    }

    static List<String> describe(WorkflowReconcileResult result) {
        List<String> rejected = new ArrayList<>();
        List<Exception> others = new ArrayList<>();
        result.getErroredDependents().forEach((dependent, error) -> {
            KubernetesClientException refused = refusal(error);
            if (refused != null) {
                String detail = refused.getStatus() != null && refused.getStatus().getMessage() != null
                        ? refused.getStatus().getMessage() : refused.getMessage();
                rejected.add(dependent.name() + ": " + detail);
                LOG.warnf("event=object-rejected dependent=%s code=%d", dependent.name(), refused.getCode());
            } else {
                others.add(error);
            }
        });
        if (!others.isEmpty()) {
            result.throwAggregateExceptionIfErrorsPresent();
        }
        return rejected.stream().sorted().toList();
    }

    private static KubernetesClientException refusal(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof KubernetesClientException k && (k.getCode() == UNPROCESSABLE || k.getCode() == BAD_REQUEST)) {
                return k;
            }
        }
        return null;
    }
}
