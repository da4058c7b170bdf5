package io.thermocline.operator.reconcile;

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
import io.thermocline.operator.tiering.TieringTarget;
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
 * writes until the resource is re-created. The keyfile and users Secrets carry no owner
 * reference: with {@code Retain} they stay beside the volumes, with {@code Delete} they go here.
 */
final class Deletion {

    /** Where a deletion stands; {@code done} lets the finalizer go. */
    record Step(boolean done, String reason, String message) {
    }

    private static final Logger LOG = Logger.getLogger(Deletion.class);

    private Deletion() {
    }

    static Step advance(KubernetesClient client, ThermoclineCluster cluster, TieringObserver tiering, ModeStore modes,
            Duration drainBound) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        ThermoclineClusterSpec spec = cluster.getSpec();
        boolean skip = "true".equals(Optional.ofNullable(cluster.getMetadata().getAnnotations())
                .map(a -> a.get(ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION)).orElse(null));
        boolean fastTierExists = client.apps().statefulSets().inNamespace(layout.namespace()).withName(layout.fastTier()).get() != null;
        if (fastTierExists && !skip) {
            // the fleet drains first (applications keep working through the proxy), then writes stop
            DrainBeforeDeletion.Pending draining = DrainBeforeDeletion.step(client, cluster, modes,
                    fastTierUri(client, cluster, layout), drainBound, ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION);
            Step pending = draining != null ? new Step(false, draining.reason(), draining.message())
                    : drain(client, cluster, layout, spec, tiering);
            if (pending != null) {
                TransitionEvents.once(client, cluster, pending.reason(), pending.message(), false);
                LOG.infof("event=deletion-waiting cluster=%s/%s step=%s hint=annotate %s=true to skip", layout.namespace(),
                        layout.cluster(), pending.reason(), ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION);
                return pending;
            }
        }
        String fastTierUri = fastTierUri(client, cluster, layout);
        if (fastTierUri != null) {
            modes.forget(fastTierUri);
        }
        if ("Delete".equals(spec.fastTier.storage.retentionPolicy)) {
            List<String> secrets = new ArrayList<>(List.of(layout.keyfileSecret(), layout.usersSecret(), layout.peerSecret()));
            for (DataPlanePart part : DataPlanePart.values()) {
                secrets.add(part.secret(layout));
            }
            for (String secret : secrets) {
                client.secrets().inNamespace(layout.namespace()).withName(secret).delete();
            }
        }
        return new Step(true, "Deleted", "writes stopped and mirrored to the archive");
    }

    /** Null when writes are stopped and the archive holds every fast-tier write; else the step waited on. */
    private static Step drain(KubernetesClient client, ThermoclineCluster cluster, ClusterLayout layout,
            ThermoclineClusterSpec spec, TieringObserver tiering) {
        var proxy = client.apps().deployments().inNamespace(layout.namespace()).withName(layout.proxy());
        Deployment deployment = proxy.get();
        if (deployment != null && !Integer.valueOf(0).equals(deployment.getSpec().getReplicas())) {
            proxy.edit(d -> {
                d.getSpec().setReplicas(0);
                return d;
            });
        }
        int proxyPods = client.pods().inNamespace(layout.namespace())
                .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT)).list().getItems().size();
        if (proxyPods > 0) {
            return new Step(false, "DeletionStoppingWrites", "proxy scaled to 0; waiting for its " + proxyPods
                    + " pod(s) to end before checking that the archive holds every write");
        }
        // a paused cluster's feeder was stopped after a drain; if anything is left, it must run again
        var feeder = client.apps().deployments().inNamespace(layout.namespace()).withName(layout.feeder());
        Deployment feederDeployment = feeder.get();
        if (feederDeployment != null && Integer.valueOf(0).equals(feederDeployment.getSpec().getReplicas())
                && !drained(client, cluster, tiering)) {
            feeder.edit(d -> {
                d.getSpec().setReplicas(1);
                return d;
            });
        }
        if (!drained(client, cluster, tiering)) {
            return new Step(false, "DeletionWaitingForFeeder", "writes are stopped; waiting until the feeder has mirrored"
                    + " every fast-tier write to the archive (annotate " + ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION
                    + "=true to delete anyway and lose what is not mirrored)");
        }
        return null;
    }

    /** The data plane's fast-tier URI, composed from the users Secret as the pods compose it; null before it exists. */
    private static String fastTierUri(KubernetesClient client, ThermoclineCluster cluster, ClusterLayout layout) {
        return UsersSecretDependent.fastTierUri(layout, cluster.getSpec().fastTier.members, UsersSecretDependent.decoded(
                client.secrets().inNamespace(layout.namespace()).withName(layout.usersSecret()).get()));
    }

    static boolean drained(KubernetesClient client, ThermoclineCluster cluster, TieringObserver tiering) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        ArchiveSecrets.Lookup secrets = ArchiveSecrets.direct(client, layout.namespace());
        return TieringPolling.target(cluster, ArchiveSecrets.read(secrets, layout.namespace(), cluster.getSpec().archive),
                        secrets.find(layout.usersSecret()))
                .flatMap(tiering::observe).map(TieringSnapshot::drained).orElse(false);
    }
}
