package io.thermocline.operator.kit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * A person's {@code kubectl edit} of a ThermoclineCluster: read, change, write back with the
 * resourceVersion read. The operator writes the same object (status, finalizers) concurrently, so
 * the API server may answer 409 Conflict; like {@code kubectl} the edit is then redone on the latest
 * version. Any other error fails the test at once.
 */
public final class UserEdits {

    private static final int CONFLICT = 409;

    private UserEdits() {}

    public static void edit(
            KubernetesClient client,
            String namespace,
            String name,
            Consumer<ThermoclineCluster> change,
            Duration within) {
        Instant giveUp = Instant.now().plus(within);
        while (true) {
            try {
                client.resources(ThermoclineCluster.class)
                        .inNamespace(namespace)
                        .withName(name)
                        .edit(c -> {
                            change.accept(c);
                            return c;
                        });
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != CONFLICT || Instant.now().isAfter(giveUp)) {
                    throw e;
                }
            }
        }
    }
}
