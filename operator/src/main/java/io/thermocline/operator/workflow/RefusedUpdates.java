package io.thermocline.operator.workflow;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Updates the API server refused in one reconcile (an immutable field changed, a value its validation rejects). The object
 * keeps running as it is, and the workflow goes on as if the update had been applied: a refused StatefulSet update must not
 * stop the replica-set steps, the proxy and the workers that depend on it. The reconciler reports what was refused.
 */
public final class RefusedUpdates {

    private static final int BAD_REQUEST = 400;
    private static final int UNPROCESSABLE = 422;
    private final Map<String, KubernetesClientException> refused = new TreeMap<>();

    public void putInto(Context<ThermoclineCluster> context) {
        context.managedWorkflowAndDependentResourceContext().put(RefusedUpdates.class, this);
    }

    /** {@code update}'s result, or {@code actual} when the API server refuses it (and a reconciler collects the refusals). */
    static <R extends HasMetadata> R attempt(Context<ThermoclineCluster> context, String dependent, R actual, Supplier<R> update) {
        try {
            return update.get();
        } catch (KubernetesClientException e) {
            KubernetesClientException refusal = refusal(e);
            var collector = context.managedWorkflowAndDependentResourceContext().get(RefusedUpdates.class, RefusedUpdates.class);
            if (refusal == null || collector.isEmpty()) {
                throw e;
            }
            collector.get().add(dependent, refusal);
            return actual;
        }
    }

    /** "dependent: the API server's message", one per refused update. */
    public synchronized Map<String, String> messages() {
        Map<String, String> messages = new TreeMap<>();
        refused.forEach((name, e) -> messages.put(name,
                e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage()));
        return messages;
    }

    private synchronized void add(String dependent, KubernetesClientException refusal) {
        refused.put(dependent, refusal);
    }

    /** A refusal of the object itself, as opposed to the API server being unreachable or overloaded (retried with backoff). */
    public static KubernetesClientException refusal(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof KubernetesClientException k && (k.getCode() == UNPROCESSABLE || k.getCode() == BAD_REQUEST)) {
                return k;
            }
        }
        return null;
    }
}
