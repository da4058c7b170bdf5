package io.thermocline.operator.kit;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Conditions;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.function.ToIntFunction;

/** Test resources: a ThermoclineCluster with one tiered collection, its archive Secret, and readiness the mock API server lacks. */
public final class Clusters {

    public static final String ARCHIVE_URI =
            "mongodb://app:s3cret@archive-0.db:27017,archive-1.db:27017/?replicaSet=archive-rs";

    private Clusters() {}

    public static ThermoclineCluster cluster(String namespace, String name) {
        ThermoclineCluster cluster = new ThermoclineCluster();
        cluster.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
        cluster.getSpec().archive.uriSecretRef = new SecretKeyRef("archive", null);
        cluster.getSpec().collections.add(new CollectionSpec("shop", "orders", "createdAt", "30d"));
        return cluster;
    }

    public static Secret archiveSecret(String namespace) {
        return new SecretBuilder()
                .withNewMetadata()
                .withName("archive")
                .withNamespace(namespace)
                .endMetadata()
                .addToData("uri", Base64.getEncoder().encodeToString(ARCHIVE_URI.getBytes(StandardCharsets.UTF_8)))
                .build();
    }

    /** The Secret {@code archive-ca} holding {@code ca.crt}: the CA a cluster's TLS settings name. */
    public static Secret archiveCaSecret(String caPem) {
        return new SecretBuilder()
                .withNewMetadata()
                .withName("archive-ca")
                .endMetadata()
                .addToData("ca.crt", Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.US_ASCII)))
                .build();
    }

    /** What the Deployment and StatefulSet controllers would report once every pod is ready (the mock API server has none). */
    public static void markReady(KubernetesClient client, String namespace, String name, int members) {
        markDeploymentsReady(client, namespace, name);
        markFastTierReady(client, namespace, name, members);
    }

    /** The proxy and feeder Deployments with all the replicas their spec asks for ready. */
    public static void markDeploymentsReady(KubernetesClient client, String namespace, String name) {
        for (String d : List.of(name + "-proxy", name + "-feeder")) {
            markReady(client, namespace, d, x -> x.getSpec().getReplicas());
        }
    }

    public static void markDeploymentReady(KubernetesClient client, String namespace, String deployment, int ready) {
        markReady(client, namespace, deployment, x -> ready);
    }

    private static void markReady(
            KubernetesClient client, String namespace, String deployment, ToIntFunction<Deployment> ready) {
        client.apps().deployments().inNamespace(namespace).withName(deployment).editStatus(d -> {
            int n = ready.applyAsInt(d);
            d.setStatus(new DeploymentStatusBuilder()
                    .withReplicas(n)
                    .withReadyReplicas(n)
                    .withAvailableReplicas(n)
                    .build());
            return d;
        });
    }

    /** The fast tier's StatefulSet ({@code NAME-fast}) with {@code members} ready. */
    public static void markFastTierReady(KubernetesClient client, String namespace, String name, int members) {
        client.apps()
                .statefulSets()
                .inNamespace(namespace)
                .withName(name + "-fast")
                .editStatus(s -> {
                    s.setStatus(new StatefulSetStatusBuilder()
                            .withReplicas(members)
                            .withReadyReplicas(members)
                            .build());
                    return s;
                });
    }

    public static Condition condition(ThermoclineCluster cluster, ConditionType type) {
        return cluster.getStatus() == null ? null : Conditions.find(cluster.getStatus().conditions, type);
    }
}
