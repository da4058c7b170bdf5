package io.thermocline.operator.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ContentHash;
import java.time.Instant;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Records a Kubernetes Event for each condition whose status changed, so
 * {@code kubectl describe} tells the story. The reason is the condition's CamelCase reason;
 * the Event's name is derived from what it reports, so a reconcile that runs again after a
 * failed status write does not send it twice. Condition messages never hold secrets.
 */
public final class TransitionEvents {

    private static final Logger LOG = Logger.getLogger(TransitionEvents.class);
    private static final int CONFLICT = 409;

    private TransitionEvents() {}

    public static void record(
            KubernetesClient client, ThermoclineCluster cluster, List<Condition> before, List<Condition> after) {
        for (Condition now : after) {
            Condition was = before == null
                    ? null
                    : before.stream()
                            .filter(c -> c.getType().equals(now.getType()))
                            .findFirst()
                            .orElse(null);
            if (was != null && was.getStatus().equals(now.getStatus())) {
                continue;
            }
            boolean good = "True".equals(now.getStatus());
            send(
                    client,
                    cluster,
                    now.getReason(),
                    now.getType() + " is " + now.getStatus() + ": " + now.getMessage(),
                    good,
                    now.getType() + "/" + now.getStatus() + "/" + now.getReason() + "/" + now.getLastTransitionTime());
        }
    }

    /** An Event sent at most once per resource and reason (e.g. each step of a deletion). */
    public static void once(
            KubernetesClient client, ThermoclineCluster cluster, String reason, String message, boolean good) {
        send(client, cluster, reason, message, good, reason);
    }

    /** As {@link #once(KubernetesClient, ThermoclineCluster, String, String, boolean)}, once per {@code identity}. */
    public static void once(
            KubernetesClient client,
            ThermoclineCluster cluster,
            String reason,
            String message,
            boolean good,
            String identity) {
        send(client, cluster, reason, message, good, identity);
    }

    private static void send(
            KubernetesClient client,
            ThermoclineCluster cluster,
            String reason,
            String message,
            boolean good,
            String identity) {
        String time = Instant.now().toString();
        try {
            client.v1()
                    .events()
                    .inNamespace(cluster.getMetadata().getNamespace())
                    .resource(new EventBuilder()
                            .withNewMetadata()
                            .withName(cluster.getMetadata().getName() + "."
                                    + ContentHash.of(cluster.getMetadata().getUid() + "/" + identity))
                            .endMetadata()
                            .withInvolvedObject(new ObjectReferenceBuilder()
                                    .withApiVersion(cluster.getApiVersion())
                                    .withKind(cluster.getKind())
                                    .withName(cluster.getMetadata().getName())
                                    .withNamespace(cluster.getMetadata().getNamespace())
                                    .withUid(cluster.getMetadata().getUid())
                                    .build())
                            .withType(good ? "Normal" : "Warning")
                            .withReason(reason)
                            .withMessage(message)
                            .withFirstTimestamp(time)
                            .withLastTimestamp(time)
                            .withCount(1)
                            .withNewSource()
                            .withComponent("thermocline-operator")
                            .endSource()
                            .build())
                    .create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != CONFLICT) {
                LOG.warnf(
                        "event=event-not-recorded cluster=%s/%s reason=%s code=%d",
                        cluster.getMetadata().getNamespace(),
                        cluster.getMetadata().getName(),
                        reason,
                        e.getCode());
            }
        }
    }
}
