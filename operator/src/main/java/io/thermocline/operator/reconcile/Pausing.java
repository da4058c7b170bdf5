package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.status.ClusterHealth;
import java.util.function.BooleanSupplier;

/**
 * Pausing without stranding a write, as deletion does: the proxy goes to zero at once; the feeder
 * keeps running until the proxy's pods are gone (no client can write any more) and the archive
 * holds every fast-tier write; only then is it scaled to zero. A feeder already at zero stays there.
 */
final class Pausing {

    static final String STOPPING_WRITES = "PausingStoppingWrites";
    static final String WAITING_FOR_FEEDER = "PausingWaitingForFeeder";

    private Pausing() {
    }

    /** The step a pause waits on, or null when the feeder may stop (or has). */
    static ClusterHealth.Pausing step(KubernetesClient client, ClusterLayout layout, Deployment feeder, BooleanSupplier drained) {
        if (feeder == null || Integer.valueOf(0).equals(feeder.getSpec().getReplicas())) {
            return null;
        }
        int proxyPods = client.pods().inNamespace(layout.namespace())
                .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT)).list().getItems().size();
        if (proxyPods > 0) {
            return new ClusterHealth.Pausing(STOPPING_WRITES, "pausing: proxy scaled to 0; waiting for its " + proxyPods
                    + " pod(s) to end; the feeder keeps running");
        }
        if (!drained.getAsBoolean()) {
            return new ClusterHealth.Pausing(WAITING_FOR_FEEDER, "pausing: writes are stopped; the feeder runs until the"
                    + " archive holds every fast-tier write, then it is scaled to 0");
        }
        return null;
    }
}
