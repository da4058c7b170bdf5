package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Pausing without stranding a write, as deletion does: the proxy goes to zero at once; the feeder
 * keeps running until the proxy's pods are gone (no client can write any more) and the archive
 * holds every fast-tier write (a dead-lettered write counts as not held: the feeder retries it); only then is it scaled to zero. A feeder already at zero stays there.
 */
final class Pausing {

    static final String STOPPING_WRITES = "PausingStoppingWrites";
    static final String WAITING_FOR_FEEDER = "PausingWaitingForFeeder";
    static final String DEAD_LETTERS = "PausingDeadLetters";

    private Pausing() {}

    /** The step a pause waits on, or null when the feeder may stop (or has). */
    static ClusterHealth.Pausing step(
            KubernetesClient client,
            ClusterLayout layout,
            Deployment feeder,
            Supplier<Optional<TieringSnapshot>> tiering) {
        if (feeder == null || Integer.valueOf(0).equals(feeder.getSpec().getReplicas())) {
            return null;
        }
        int proxyPods = client.pods()
                .inNamespace(layout.namespace())
                .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT))
                .list()
                .getItems()
                .size();
        if (proxyPods > 0) {
            return new ClusterHealth.Pausing(
                    STOPPING_WRITES,
                    "pausing: proxy scaled to 0; waiting for its " + proxyPods
                            + " pod(s) to end; the feeder keeps running");
        }
        Optional<TieringSnapshot> now = tiering.get();
        // dead letters first: while one is open the feeder's mirrored-through does not move, so the drain would only
        // say "waiting for the feeder" without naming what holds it
        if (now.isPresent() && now.get().heldOnlyInFastTier() != null) {
            // the feeder retries dead letters: stopping it would leave them unresolved for the whole pause
            return new ClusterHealth.Pausing(
                    DEAD_LETTERS,
                    "pausing: " + now.get().heldOnlyInFastTier()
                            + "; the feeder keeps running until they are mirrored");
        }
        if (!now.map(TieringSnapshot::drained).orElse(false)) {
            return new ClusterHealth.Pausing(
                    WAITING_FOR_FEEDER,
                    "pausing: writes are stopped; the feeder runs until the"
                            + " archive holds every fast-tier write, then it is scaled to 0");
        }
        return null;
    }
}
