package io.thermocline.operator.kit;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Kubernetes' garbage collector and the API server's handling of a delete's propagation policy,
 * which the mock API server has neither of (it deletes at once and keeps every dependent):
 * <ul>
 * <li>{@link #delete} with {@code Foreground} leaves the object with a deletion timestamp and the
 * {@code foregroundDeletion} finalizer; the collector then deletes every dependent (foreground too,
 * when it has dependents of its own) and removes the finalizer once none is left. The owner's
 * other finalizers (an operator's) do not hold the dependents back: that is the point.</li>
 * <li>{@code Orphan}: the {@code orphan} finalizer; the collector removes the owner references of
 * the dependents, then the finalizer.</li>
 * <li>{@code Background} (and any delete the mock performs): once every owner of an object is gone,
 * the object is deleted.</li>
 * </ul>
 * Ownership is by uid, as the collector's, over the kinds the operator makes plus pods and PVCs.
 */
public final class GarbageCollector {

    public static final String FOREGROUND = "foregroundDeletion";
    public static final String ORPHAN = "orphan";
    private static final List<Class<? extends HasMetadata>> KINDS = List.of(ThermoclineCluster.class, StatefulSet.class,
            Deployment.class, Pod.class, PersistentVolumeClaim.class, Service.class, ConfigMap.class, Secret.class,
            CronJob.class, Job.class, PodDisruptionBudget.class, NetworkPolicy.class);

    private final KubernetesClient client;
    private final String namespace;
    private final List<String> collected = new java.util.concurrent.CopyOnWriteArrayList<>();

    GarbageCollector(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /** {@code kubectl delete --cascade=...} / Argo CD's prune: the API server's part of a delete with {@code policy}. */
    public void delete(HasMetadata object, DeletionPropagation policy) {
        String finalizer = switch (policy) {
            case FOREGROUND -> FOREGROUND;
            case ORPHAN -> ORPHAN;
            case BACKGROUND -> null;
        };
        if (finalizer != null) {
            // the API server sets the finalizer inside the delete itself: a concurrent write (the operator's status) is no conflict
            for (int attempt = 0; ; attempt++) {
                try {
                    client.resource(object).edit(o -> {
                        List<String> finalizers = new ArrayList<>(o.getMetadata().getFinalizers() == null ? List.of() : o.getMetadata().getFinalizers());
                        finalizers.add(finalizer);
                        o.getMetadata().setFinalizers(finalizers);
                        return o;
                    });
                    break;
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 409 || attempt == 20) {
                        throw e;
                    }
                }
            }
        }
        client.resource(object).withPropagationPolicy(policy).delete();
    }

    /** What the collector deleted, as {@code Kind/name}, in order. */
    public List<String> collected() {
        return collected;
    }

    /** One pass of the collector. */
    synchronized void collect() {
        Map<String, HasMetadata> byUid = new HashMap<>();
        List<HasMetadata> all = new ArrayList<>();
        for (Class<? extends HasMetadata> kind : KINDS) {
            for (HasMetadata o : client.resources(kind).inNamespace(namespace).list().getItems()) {
                byUid.put(o.getMetadata().getUid(), o);
                all.add(o);
            }
        }
        for (HasMetadata o : all) {
            List<OwnerReference> owners = o.getMetadata().getOwnerReferences();
            if (owners == null || owners.isEmpty() || o.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            boolean orphaned = owners.stream().map(r -> byUid.get(r.getUid())).anyMatch(owner -> owner != null && deleting(owner, ORPHAN));
            if (orphaned) {
                ignoringConflicts(() -> client.resource(o).edit(x -> {
                    x.getMetadata().getOwnerReferences().removeIf(r -> deleting(byUid.get(r.getUid()), ORPHAN));
                    return x;
                }));
                continue;
            }
            boolean ownersGone = owners.stream().map(r -> byUid.get(r.getUid()))
                    .allMatch(owner -> owner == null || deleting(owner, FOREGROUND));
            if (ownersGone) {
                boolean hasDependents = all.stream().anyMatch(d -> ownedBy(d, o));
                collected.add(o.getKind() + "/" + o.getMetadata().getName());
                ignoringConflicts(() -> delete(o, hasDependents && owners.stream().map(r -> byUid.get(r.getUid()))
                        .anyMatch(owner -> owner != null) ? DeletionPropagation.FOREGROUND : DeletionPropagation.BACKGROUND));
            }
        }
        for (HasMetadata o : all) {
            for (String finalizer : List.of(FOREGROUND, ORPHAN)) {
                if (deleting(o, finalizer) && (ORPHAN.equals(finalizer) || all.stream().noneMatch(d -> ownedBy(d, o)))) {
                    ignoringConflicts(() -> client.resource(o).edit(x -> {
                        x.getMetadata().getFinalizers().remove(finalizer);
                        return x;
                    }));
                }
            }
        }
    }

    private static boolean deleting(HasMetadata o, String finalizer) {
        return o != null && o.getMetadata().getDeletionTimestamp() != null && o.getMetadata().getFinalizers() != null
                && o.getMetadata().getFinalizers().contains(finalizer);
    }

    private static boolean ownedBy(HasMetadata dependent, HasMetadata owner) {
        return dependent.getMetadata().getOwnerReferences() != null && dependent.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> r.getUid().equals(owner.getMetadata().getUid()));
    }

    private static void ignoringConflicts(Runnable write) {
        try {
            write.run();
        } catch (KubernetesClientException e) {
            // gone meanwhile, or written concurrently: the next pass sees the new state
        }
    }
}
