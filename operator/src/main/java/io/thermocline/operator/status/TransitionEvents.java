package io.thermocline.operator.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.time.Instant;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Records a Kubernetes Event for each condition whose status changed, so
 * {@code kubectl describe} tells the story. Condition messages never hold secrets.
 */
public final class TransitionEvents {

    private static final Logger LOG = Logger.getLogger(TransitionEvents.class);

    private TransitionEvents() {
    }

    public static void record(KubernetesClient client, ThermoclineCluster cluster, List<Condition> before, List<Condition> after) {
        for (Condition now : after) {
            Condition was = before == null ? null : before.stream().filter(c -> c.getType().equals(now.getType())).findFirst().orElse(null);
            if (was != null && was.getStatus().equals(now.getStatus())) {
                continue;
            }
            boolean good = "True".equals(now.getStatus());
            String time = Instant.now().toString();
            try {
                client.v1().events().inNamespace(cluster.getMetadata().getNamespace()).resource(new EventBuilder()
                        .withNewMetadata().withGenerateName(cluster.getMetadata().getName() + "-").endMetadata()
                        .withInvolvedObject(new ObjectReferenceBuilder()
                                .withApiVersion(cluster.getApiVersion()).withKind(cluster.getKind())
                                .withName(cluster.getMetadata().getName()).withNamespace(cluster.getMetadata().getNamespace())
                                .withUid(cluster.getMetadata().getUid()).build())
                        .withType(good ? "Normal" : "Warning")
                        .withReason(now.getType() + (good ? "" : "False") + ":" + now.getReason())
                        .withMessage(now.getMessage())
                        .withFirstTimestamp(time)
                        .withLastTimestamp(time)
                        .withCount(1)
                        .withNewSource().withComponent("thermocline-operator").endSource()
                        .build()).create();
            } catch (KubernetesClientException e) {
                LOG.warnf("event=event-not-recorded cluster=%s/%s condition=%s code=%d", cluster.getMetadata().getNamespace(),
                        cluster.getMetadata().getName(), now.getType(), e.getCode());
            }
        }
    }
}
