package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.credentials.DataPlanePart;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.DrainBeforeDeletion;
import io.thermocline.operator.mode.ModeStore;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.status.TransitionEvents;
import io.thermocline.operator.tiering.TieringObserver;
import io.thermocline.operator.tiering.TieringPolling;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Deleting a cluster without losing a write: first drain the fleet ({@link DrainBeforeDeletion}: the
 * archive authoritative again, or a refusal when the fast tier cannot be read), then stop writes (the proxy scaled to zero and
 * its pods gone, so no client can write after the check), then wait until the feeder has
 * mirrored everything to the archive, then let the objects go. This holds for both retention
 * policies: with {@code Retain} the volumes stay, but nothing would mirror their unmirrored
 * writes until the resource is re-created.
 *
 * <p>What the drain needs (fast tier, proxy, feeder, their Services and config) has no owner
 * reference, so no propagation policy lets the garbage collector take it during the drain; it is
 * deleted here, after the drain. The StatefulSet controller never deletes a volume
 * ({@code whenDeleted: Retain}): with {@code Delete} the PVCs go here, then the keyfile, users and
 * part Secrets (no owner reference either), last, so a deletion retried after a restart still finds
 * them. Volumes without their StatefulSet (deleted by hand, or by an earlier operator's garbage
 * collection) are not "nothing to drain": with {@code Delete} the deletion waits for the user's choice.
 */
final class Deletion {

    /** Where a deletion stands; {@code done} lets the finalizer go. */
    record Step(boolean done, String reason, String message) {}

    /** Written by the operator once the drain is done; the objects go after it. */
    static final String DRAINED_ANNOTATION = "thermocline.io/deletion-drained";

    static final String DEAD_LETTERS = "DeletionDeadLetters";
    static final String VOLUMES_WITHOUT_FAST_TIER = "DeletionVolumesWithoutFastTier";
    private static final Logger LOG = Logger.getLogger(Deletion.class);

    private Deletion() {}

    static Step advance(
            KubernetesClient client,
            ThermoclineCluster cluster,
            TieringObserver tiering,
            ModeStore modes,
            Duration drainBound) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        ThermoclineClusterSpec spec = cluster.getSpec();
        boolean skip = annotated(cluster, ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION);
        // set once the drain is done: a restart (or a failed finalizer patch) after the first objects went does not
        // drain again
        boolean drainedBefore = annotated(cluster, DRAINED_ANNOTATION);
        boolean deleteVolumes = "Delete".equals(spec.fastTier.storage.retentionPolicy);
        boolean fastTierExists = client.apps()
                        .statefulSets()
                        .inNamespace(layout.namespace())
                        .withName(layout.fastTier())
                        .get()
                != null;
        if (!skip && !drainedBefore) {
            Step pending = null;
            if (fastTierExists) {
                // the fleet drains first (applications keep working through the proxy), then writes stop
                DrainBeforeDeletion.Pending draining = DrainBeforeDeletion.step(
                        client,
                        cluster,
                        modes,
                        fastTierUri(client, cluster, layout),
                        drainBound,
                        ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION);
                pending = draining != null
                        ? new Step(false, draining.reason(), draining.message())
                        : drain(client, cluster, layout, spec, tiering);
            } else if (deleteVolumes && !memberClaims(client, layout).isEmpty()) {
                pending = new Step(
                        false,
                        VOLUMES_WITHOUT_FAST_TIER,
                        "the StatefulSet " + layout.fastTier() + " is gone but its"
                                + " volumes " + memberClaims(client, layout)
                                + " are not, and may hold writes the archive lacks:"
                                + " they are not deleted. Set spec.fastTier.storage.retentionPolicy: Retain to keep them (a re-created"
                                + " resource resumes on them and mirrors what is left), or annotate "
                                + ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION
                                + "=true to delete them and lose what is not mirrored");
            }
            if (pending != null) {
                TransitionEvents.once(client, cluster, pending.reason(), pending.message(), false);
                LOG.infof(
                        "event=deletion-waiting cluster=%s/%s step=%s hint=annotate %s=true to skip",
                        layout.namespace(),
                        layout.cluster(),
                        pending.reason(),
                        ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION);
                return pending;
            }
            markDrained(client, cluster);
        }
        String fastTierUri = fastTierUri(client, cluster, layout);
        if (fastTierUri != null) {
            modes.forget(fastTierUri);
        }
        // what the drain needed has no owner reference (DrainHolderDependent): it goes now, the rest with the garbage
        // collector
        String namespace = layout.namespace();
        client.apps()
                .deployments()
                .inNamespace(namespace)
                .withName(layout.proxy())
                .withPropagationPolicy(DeletionPropagation.BACKGROUND)
                .delete();
        client.apps()
                .deployments()
                .inNamespace(namespace)
                .withName(layout.feeder())
                .withPropagationPolicy(DeletionPropagation.BACKGROUND)
                .delete();
        client.apps()
                .statefulSets()
                .inNamespace(namespace)
                .withName(layout.fastTier())
                .withPropagationPolicy(DeletionPropagation.BACKGROUND)
                .delete();
        for (String service : List.of(layout.fastTier(), layout.proxy(), layout.proxyPeers())) {
            client.services().inNamespace(namespace).withName(service).delete();
        }
        client.configMaps().inNamespace(namespace).withName(layout.config()).delete();
        if (deleteVolumes) {
            for (String claim : memberClaims(client, layout)) {
                client.persistentVolumeClaims()
                        .inNamespace(namespace)
                        .withName(claim)
                        .delete();
            }
            // last: until here a retried deletion still finds the credentials the fast tier needs
            List<String> secrets =
                    new ArrayList<>(List.of(layout.keyfileSecret(), layout.usersSecret(), layout.peerSecret()));
            for (DataPlanePart part : DataPlanePart.values()) {
                secrets.add(part.secret(layout));
            }
            for (String secret : secrets) {
                client.secrets().inNamespace(namespace).withName(secret).delete();
            }
        }
        return new Step(true, "Deleted", "writes stopped and mirrored to the archive");
    }

    /** The fast tier's member PVCs that exist, of every ordinal. */
    static List<String> memberClaims(KubernetesClient client, ClusterLayout layout) {
        return client.persistentVolumeClaims().inNamespace(layout.namespace()).list().getItems().stream()
                .map(c -> c.getMetadata().getName())
                .filter(layout::isMemberClaim)
                .sorted()
                .toList();
    }

    private static boolean annotated(ThermoclineCluster cluster, String annotation) {
        return "true"
                .equals(Optional.ofNullable(cluster.getMetadata().getAnnotations())
                        .map(a -> a.get(annotation))
                        .orElse(null));
    }

    private static void markDrained(KubernetesClient client, ThermoclineCluster cluster) {
        client.resources(ThermoclineCluster.class)
                .inNamespace(cluster.getMetadata().getNamespace())
                .withName(cluster.getMetadata().getName())
                .edit(c -> {
                    Map<String, String> annotations = new java.util.HashMap<>(
                            Optional.ofNullable(c.getMetadata().getAnnotations())
                                    .orElse(Map.of()));
                    annotations.put(DRAINED_ANNOTATION, "true");
                    c.getMetadata().setAnnotations(annotations);
                    return c;
                });
    }

    /** Null when writes are stopped and the archive holds every fast-tier write; else the step waited on. */
    private static Step drain(
            KubernetesClient client,
            ThermoclineCluster cluster,
            ClusterLayout layout,
            ThermoclineClusterSpec spec,
            TieringObserver tiering) {
        var proxy = client.apps().deployments().inNamespace(layout.namespace()).withName(layout.proxy());
        Deployment deployment = proxy.get();
        if (deployment != null
                && !Integer.valueOf(0).equals(deployment.getSpec().getReplicas())) {
            proxy.edit(d -> {
                d.getSpec().setReplicas(0);
                return d;
            });
        }
        int proxyPods = client.pods()
                .inNamespace(layout.namespace())
                .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT))
                .list()
                .getItems()
                .size();
        if (proxyPods > 0) {
            return new Step(
                    false,
                    "DeletionStoppingWrites",
                    "proxy scaled to 0; waiting for its " + proxyPods
                            + " pod(s) to end before checking that the archive holds every write");
        }
        // a paused cluster's feeder was stopped after a drain; if anything is left, it must run again
        Optional<TieringSnapshot> tieringNow = observe(client, cluster, tiering);
        boolean complete = tieringNow
                .map(t -> t.drained() && t.heldOnlyInFastTier() == null)
                .orElse(false);
        var feeder = client.apps().deployments().inNamespace(layout.namespace()).withName(layout.feeder());
        Deployment feederDeployment = feeder.get();
        if (feederDeployment != null
                && Integer.valueOf(0).equals(feederDeployment.getSpec().getReplicas())
                && !complete) {
            feeder.edit(d -> {
                d.getSpec().setReplicas(1);
                return d;
            });
        }
        // dead letters first: while one is open the feeder's mirrored-through does not move, so "waiting for the
        // feeder" would not name what holds it
        String held = tieringNow.map(TieringSnapshot::heldOnlyInFastTier).orElse(null);
        if (held != null) {
            return new Step(
                    false,
                    DEAD_LETTERS,
                    "deletion waits: " + held
                            + "; deleting now would lose them (annotate "
                            + ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION
                            + "=true to delete anyway)");
        }
        if (!complete) {
            return new Step(
                    false,
                    "DeletionWaitingForFeeder",
                    "writes are stopped; waiting until the feeder has mirrored"
                            + " every fast-tier write to the archive (annotate "
                            + ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION
                            + "=true to delete anyway and lose what is not mirrored)");
        }
        return null;
    }

    /** The data plane's fast-tier URI, composed from the users Secret as the pods compose it; null before it exists. */
    private static String fastTierUri(KubernetesClient client, ThermoclineCluster cluster, ClusterLayout layout) {
        return UsersSecretDependent.fastTierUri(
                layout,
                cluster.getSpec().fastTier.members,
                UsersSecretDependent.decoded(client.secrets()
                        .inNamespace(layout.namespace())
                        .withName(layout.usersSecret())
                        .get()));
    }

    /** What the tiering looks like now (a fresh sync barrier), empty when it cannot be observed. */
    static Optional<TieringSnapshot> observe(
            KubernetesClient client, ThermoclineCluster cluster, TieringObserver tiering) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        ArchiveSecrets.Lookup secrets = ArchiveSecrets.direct(client, layout.namespace());
        return TieringPolling.target(
                        cluster,
                        ArchiveSecrets.read(secrets, layout.namespace(), cluster.getSpec().archive),
                        secrets.find(layout.usersSecret()))
                .flatMap(tiering::observe);
    }
}
