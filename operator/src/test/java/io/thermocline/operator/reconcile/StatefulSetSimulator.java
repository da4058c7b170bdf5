package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.fakes.ReplicaSetModel;
import io.thermocline.operator.fasttier.FastTierPods;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What the mock API server does not do: the StatefulSet controller (OnDelete) and the
 * kubelet. Pods follow the StatefulSet's replicas, a deleted pod comes back on the current
 * template, the replica-set model learns which pods run which version, and readyReplicas
 * counts the members the model says are PRIMARY or SECONDARY (the readiness probe).
 */
final class StatefulSetSimulator implements AutoCloseable {

    private final KubernetesClient client;
    private final ClusterLayout layout;
    private final ReplicaSetModel model;
    private final Set<String> made = new HashSet<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    StatefulSetSimulator(KubernetesClient client, ClusterLayout layout, ReplicaSetModel model) {
        this.client = client;
        this.layout = layout;
        this.model = model.podsDrivenByTest();
        timer.scheduleWithFixedDelay(this::sync, 0, 100, TimeUnit.MILLISECONDS);
    }

    private synchronized void sync() {
        try {
            StatefulSet sts = client.apps().statefulSets().inNamespace(layout.namespace()).withName(layout.fastTier()).get();
            if (sts == null) {
                return;
            }
            int replicas = sts.getSpec().getReplicas();
            String version = FastTierPods.version(sts);
            List<String> pods = client.pods().inNamespace(layout.namespace()).list().getItems().stream()
                    .map(p -> p.getMetadata().getName()).toList();
            for (String name : List.copyOf(made)) {
                int ordinal = Integer.parseInt(name.substring(name.lastIndexOf('-') + 1));
                if (ordinal >= replicas) {
                    client.pods().inNamespace(layout.namespace()).withName(name).delete();
                    made.remove(name);
                    model.podGone(layout.memberHost(ordinal));
                } else if (!pods.contains(name)) {
                    create(sts, ordinal); // the operator deleted it: a restart on the current template
                    model.restarted(layout.memberHost(ordinal), version);
                }
            }
            for (int i = 0; i < replicas; i++) {
                if (!made.contains(layout.fastTier() + "-" + i)) {
                    create(sts, i);
                }
            }
            model.podsRunning(layout.memberHosts(replicas), version);
            int ready = (int) layout.memberHosts(replicas).stream().filter(model::healthy).count();
            if (sts.getStatus() == null || !Integer.valueOf(ready).equals(sts.getStatus().getReadyReplicas())
                    || !Integer.valueOf(replicas).equals(sts.getStatus().getReplicas())) {
                client.apps().statefulSets().inNamespace(layout.namespace()).withName(layout.fastTier()).editStatus(s -> {
                    s.setStatus(new StatefulSetStatusBuilder().withReplicas(replicas).withReadyReplicas(ready).build());
                    return s;
                });
            }
        } catch (RuntimeException e) {
            // the next tick retries (a conflict with the operator's own writes)
        }
    }

    private void create(StatefulSet sts, int ordinal) {
        String name = layout.fastTier() + "-" + ordinal;
        Pod pod = new PodBuilder()
                .withNewMetadata().withName(name).withNamespace(layout.namespace())
                .withLabels(sts.getSpec().getTemplate().getMetadata().getLabels())
                .withAnnotations(sts.getSpec().getTemplate().getMetadata().getAnnotations()).endMetadata()
                .withSpec(sts.getSpec().getTemplate().getSpec())
                .build();
        client.pods().inNamespace(layout.namespace()).resource(pod).createOr(existing -> existing.update());
        made.add(name);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
