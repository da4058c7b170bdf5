package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Conditions;

/** Test resources: a ThermoclineCluster with one tiered collection, and its archive Secret. */
final class Clusters {

    static final String ARCHIVE_URI = "mongodb://app:s3cret@archive-0.db:27017,archive-1.db:27017/?replicaSet=archive-rs";

    private Clusters() {
    }

    static ThermoclineCluster cluster(String namespace, String name) {
        ThermoclineCluster cluster = new ThermoclineCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
        cluster.getSpec().archive.uriSecretRef = new SecretKeyRef("archive", null);
        cluster.getSpec().collections.add(new CollectionSpec("shop", "orders", "createdAt", "30d"));
        return cluster;
    }

    static Secret archiveSecret(String namespace) {
        return new SecretBuilder()
                .withNewMetadata().withName("archive").withNamespace(namespace).endMetadata()
                .addToData("uri", java.util.Base64.getEncoder().encodeToString(ARCHIVE_URI.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .build();
    }

    /** What the Deployment and StatefulSet controllers would report once every pod is ready (the mock API server has none). */
    static void markReady(io.fabric8.kubernetes.client.KubernetesClient client, String namespace, String name, int members) {
        for (String d : java.util.List.of(name + "-proxy", name + "-feeder")) {
            client.apps().deployments().inNamespace(namespace).withName(d).editStatus(x -> {
                int n = x.getSpec().getReplicas();
                x.setStatus(new io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder().withReplicas(n).withReadyReplicas(n)
                        .withAvailableReplicas(n).build());
                return x;
            });
        }
        client.apps().statefulSets().inNamespace(namespace).withName(name + "-fast").editStatus(s -> {
            s.setStatus(new io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder().withReplicas(members)
                    .withReadyReplicas(members).build());
            return s;
        });
    }

    static Condition condition(ThermoclineCluster cluster, ConditionType type) {
        return cluster.getStatus() == null ? null : Conditions.find(cluster.getStatus().conditions, type);
    }
}
