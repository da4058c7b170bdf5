package io.thermocline.operator.kit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The Deployment and StatefulSet controllers and the kubelet, as far as the operator can see them:
 * pods owned by their workload (a Deployment's directly: the ReplicaSet layer changes nothing the
 * operator reads), a StatefulSet's member PVCs {@code data-NAME-N} (owner-referenced to the
 * StatefulSet when its {@code whenDeleted} is {@code Delete}, as the real controller does), ready
 * replicas in the status, and pods that stay {@code Terminating} after their delete (a finalizer
 * the kubelet part removes {@link #terminating} later, or only on {@link #endTerminating} while
 * held), with a deleted StatefulSet pod made again only once it is gone.
 */
public final class Workloads {

    /** The kubelet's part of a pod's deletion, as a finalizer: the pod stays listed with its deletion timestamp. */
    public static final String RUNNING = "kit.thermocline.io/running";

    private final KubernetesClient client;
    private final String namespace;
    private final Clock clock = Clock.systemUTC();
    private volatile Duration terminating = Duration.ofSeconds(2);
    private volatile boolean held;

    Workloads(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /** How long a deleted pod stays Terminating (its grace period, scaled to a test). */
    public Workloads terminatingFor(Duration duration) {
        terminating = duration;
        return this;
    }

    /** Deleted pods stay Terminating until {@link #endTerminating}. */
    public Workloads holdTerminating() {
        held = true;
        return this;
    }

    /** Every Terminating pod ends now (and later ones after {@link #terminatingFor}). */
    public void endTerminating() {
        held = false;
        terminating = Duration.ZERO;
    }

    public List<Pod> pods(String prefix) {
        return client.pods().inNamespace(namespace).list().getItems().stream()
                .filter(p -> p.getMetadata().getName().startsWith(prefix)).toList();
    }

    synchronized void run() {
        List<Pod> pods = client.pods().inNamespace(namespace).list().getItems();
        for (Pod pod : pods) {
            String deleted = pod.getMetadata().getDeletionTimestamp();
            if (deleted != null && !held && pod.getMetadata().getFinalizers() != null && pod.getMetadata().getFinalizers().contains(RUNNING)
                    && !clock.instant().isBefore(Instant.parse(deleted).plus(terminating))) {
                quietly(() -> client.resource(pod).edit(p -> {
                    p.getMetadata().getFinalizers().remove(RUNNING);
                    return p;
                }));
            }
        }
        for (Deployment d : client.apps().deployments().inNamespace(namespace).list().getItems()) {
            if (d.getMetadata().getDeletionTimestamp() == null) {
                deployment(d, owned(pods, d));
            }
        }
        for (StatefulSet s : client.apps().statefulSets().inNamespace(namespace).list().getItems()) {
            if (s.getMetadata().getDeletionTimestamp() == null) {
                statefulSet(s, owned(pods, s));
            }
        }
    }

    private void deployment(Deployment d, List<Pod> pods) {
        int replicas = Objects.requireNonNullElse(d.getSpec().getReplicas(), 1);
        List<Pod> live = pods.stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
        for (int i = live.size(); i < replicas; i++) {
            create(d, d.getMetadata().getName() + "-" + Long.toHexString(System.nanoTime()), d.getSpec().getTemplate());
        }
        for (Pod extra : live.subList(Math.min(replicas, live.size()), live.size())) {
            quietly(() -> client.resource(extra).delete());
        }
        int ready = Math.min(replicas, live.size());
        if (d.getStatus() == null || !Integer.valueOf(ready).equals(d.getStatus().getReadyReplicas())) {
            quietly(() -> client.resource(d).editStatus(x -> {
                x.setStatus(new DeploymentStatusBuilder().withReplicas(ready).withReadyReplicas(ready).withAvailableReplicas(ready).build());
                return x;
            }));
        }
    }

    private void statefulSet(StatefulSet s, List<Pod> pods) {
        int replicas = Objects.requireNonNullElse(s.getSpec().getReplicas(), 1);
        String name = s.getMetadata().getName();
        boolean claimsOwned = s.getSpec().getPersistentVolumeClaimRetentionPolicy() != null
                && "Delete".equals(s.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted());
        for (int i = 0; i < replicas; i++) {
            String pod = name + "-" + i;
            String claim = "data-" + name + "-" + i;
            if (client.persistentVolumeClaims().inNamespace(namespace).withName(claim).get() == null) {
                PersistentVolumeClaim pvc = new PersistentVolumeClaimBuilder()
                        .withNewMetadata().withName(claim).withNamespace(namespace)
                        .withLabels(s.getSpec().getSelector().getMatchLabels())
                        .withOwnerReferences(claimsOwned ? List.of(ownerRef(s)) : List.of()).endMetadata()
                        .withSpec(s.getSpec().getVolumeClaimTemplates().get(0).getSpec())
                        .build();
                quietly(() -> client.resource(pvc).create());
            }
            // a deleted member comes back once its pod is gone (a Terminating pod holds the name)
            if (pods.stream().noneMatch(p -> p.getMetadata().getName().equals(pod))) {
                create(s, pod, s.getSpec().getTemplate());
            }
        }
        for (Pod p : pods) {
            String n = p.getMetadata().getName();
            if (p.getMetadata().getDeletionTimestamp() == null && Integer.parseInt(n.substring(n.lastIndexOf('-') + 1)) >= replicas) {
                quietly(() -> client.resource(p).delete());
            }
        }
        int ready = (int) pods.stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).count();
        if (s.getStatus() == null || !Integer.valueOf(ready).equals(s.getStatus().getReadyReplicas())) {
            quietly(() -> client.resource(s).editStatus(x -> {
                x.setStatus(new StatefulSetStatusBuilder().withReplicas(replicas).withReadyReplicas(ready).build());
                return x;
            }));
        }
    }

    private void create(HasMetadata owner, String name, PodTemplateSpec template) {
        Pod pod = new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(namespace)
                .withLabels(template.getMetadata().getLabels()).withAnnotations(template.getMetadata().getAnnotations())
                .withOwnerReferences(ownerRef(owner)).withFinalizers(RUNNING).endMetadata()
                .withSpec(template.getSpec())
                .build();
        quietly(() -> client.resource(pod).create());
    }

    private static OwnerReference ownerRef(HasMetadata owner) {
        return new OwnerReferenceBuilder().withApiVersion(owner.getApiVersion()).withKind(owner.getKind())
                .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(true).build();
    }

    private static List<Pod> owned(List<Pod> pods, HasMetadata owner) {
        List<Pod> mine = new ArrayList<>();
        for (Pod p : pods) {
            if (p.getMetadata().getOwnerReferences() != null && p.getMetadata().getOwnerReferences().stream()
                    .anyMatch(r -> r.getUid().equals(owner.getMetadata().getUid()))) {
                mine.add(p);
            }
        }
        return mine;
    }

    private static void quietly(Runnable write) {
        try {
            write.run();
        } catch (KubernetesClientException e) {
            // a conflict with a concurrent write, or gone meanwhile: the next pass retries
        }
    }
}
