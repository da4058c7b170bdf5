package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.archive.ArchiveSecretWatch;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.fasttier.FastTierPods;
import io.thermocline.operator.fasttier.ReplicaSetConnector;
import io.thermocline.operator.fasttier.ReplicaSetDependent;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import io.thermocline.operator.fasttier.VolumeExpansion;
import io.thermocline.operator.fasttier.VolumeRecords;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import io.thermocline.operator.observability.ServiceMonitorDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import io.thermocline.operator.workflow.RefusedUpdates;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Runs a plan: the fast tier's TLS, the dependent-resource workflow (only against a reachable, compatible archive and a
 * valid spec), volume growth and the replica-set step's own acts (a member's restart, the volumes' record).
 */
final class ClusterWorkflow {

    private static final Logger LOG = Logger.getLogger(ThermoclineClusterReconciler.class);

    private final ReplicaSetConnector replicaSetConnector;
    private final OperatorSettings settings;
    /** Each cluster's last replica-set step, which sizes the StatefulSet of the next plan. */
    private final Map<String, ReplicaSetState> lastSteps;

    ClusterWorkflow(
            ReplicaSetConnector replicaSetConnector,
            OperatorSettings settings,
            Map<String, ReplicaSetState> lastSteps) {
        this.replicaSetConnector = replicaSetConnector;
        this.settings = settings;
        this.lastSteps = lastSteps;
    }

    WorkflowOutcome run(ThermoclineCluster cluster, Context<ThermoclineCluster> context, ClusterPlan plan) {
        if (!plan.deploy()) {
            held(plan);
            return WorkflowOutcome.HELD;
        }
        FastTierTlsStep.Result tls = FastTierTlsStep.run(
                context.getClient(),
                cluster,
                plan.fastTier().current(),
                new FastTierTlsStep.Clients(
                        Secondaries.named(
                                context, Deployment.class, plan.layout().proxy()),
                        plan.feeder(),
                        Secondaries.named(context, Job.class, plan.warmerJob())),
                ArchiveSecretWatch.cached(context),
                Instant.now());
        DesiredCluster desired = desired(plan, tls);
        desired.putInto(context);
        ServiceMonitorDependent.SelectorLabels.parse(settings.monitoringLabels())
                .putInto(context);
        new ReplicaSetDependent.Run(replicaSetConnector, plan.fastTier().replicaSetTarget()).putInto(context);
        List<String> rejected = apply(context, plan, desired);
        ReplicaSetState replicaSet = replicaSetStep(context, plan);
        return new WorkflowOutcome(desired, replicaSet, rejected, tls.condition());
    }

    private void held(ClusterPlan plan) {
        LOG.infof(
                "event=workflow-held cluster=%s/%s specValid=%s archive=%s version=%s",
                plan.layout().namespace(),
                plan.layout().cluster(),
                plan.config().problem() == null,
                plan.archive().getClass().getSimpleName(),
                plan.version() == null ? "unknown" : plan.version().reason());
    }

    private DesiredCluster desired(ClusterPlan plan, FastTierTlsStep.Result tls) {
        ThermoclineClusterSpec spec = plan.spec();
        // the data plane's CA bundle is in its pod templates' hash: a renewed CA rolls the proxy and feeder
        String secretHash = archiveSecretHash(plan.access())
                + (tls.tls().clientsTls() ? "-" + tls.tls().clientBundleHash() : "");
        return new DesiredCluster(
                plan.layout(),
                spec,
                spec.image == null || spec.image.isBlank() ? settings.dataPlaneImage() : spec.image,
                plan.fastTierVersion(),
                plan.fastTier().replicas(),
                FastTierPods.claimSize(plan.fastTier().current(), spec.fastTier.storage.size),
                plan.config().yaml(),
                ContentHash.of(plan.config().yaml()),
                secretHash,
                plan.warmerJob(),
                settings.namespace().orElse(null),
                plan.feederStopped(),
                tls.tls());
    }

    /**
     * The workflow, then the volumes' growth: an object the API server refuses is reported; the others, and the
     * replica set, are still managed.
     */
    private static List<String> apply(Context<ThermoclineCluster> context, ClusterPlan plan, DesiredCluster desired) {
        RefusedUpdates refusedUpdates = new RefusedUpdates();
        refusedUpdates.putInto(context);
        List<String> rejected = ApiRejections.reconcile(
                () -> context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow(), refusedUpdates);
        if (rejected.isEmpty()) {
            removeObsoleteWarmers(context, plan.layout(), desired.warmerJobName());
        }
        String volumes = VolumeExpansion.apply(
                context.getClient(), plan.layout(), plan.fastTier().replicas(), plan.spec().fastTier.storage.size);
        if (volumes != null) {
            rejected = new ArrayList<>(rejected);
            rejected.add(volumes);
        }
        return rejected;
    }

    /** The replica-set step the workflow took: remembered, a member restarted, a converged set's versions recorded. */
    private ReplicaSetState replicaSetStep(Context<ThermoclineCluster> context, ClusterPlan plan) {
        KubernetesClient client = context.getClient();
        ClusterLayout layout = plan.layout();
        ReplicaSetState replicaSet = ReplicaSetDependent.stepOf(context);
        if (replicaSet != null) {
            lastSteps.put(ClusterPlan.key(layout), replicaSet);
        }
        if (replicaSet instanceof ReplicaSetState.RestartMember restart) {
            FastTierPods.restart(client, layout, restart.host());
        }
        ReplicaSetTarget target = plan.fastTier().replicaSetTarget();
        if (replicaSet instanceof ReplicaSetState.Converged converged
                && converged.featureCompatibilityVersion() != null
                && target != null
                && target.version() != null) {
            VolumeRecords.write(
                    client,
                    layout,
                    plan.spec().fastTier.members,
                    target.version(),
                    converged.featureCompatibilityVersion());
        }
        return replicaSet;
    }

    /** Hash of the archive's connection string and CA: a rotated Secret changes the pod templates, so the pods restart. */
    private static String archiveSecretHash(ArchiveSecrets.Access access) {
        return access instanceof ArchiveSecrets.Found found
                ? ContentHash.of(
                        found.connection().uri() + "\n" + found.connection().caPem())
                : "none";
    }

    /** Jobs of earlier windows are obsolete once the windows changed: the current Job warms the current windows. */
    private static void removeObsoleteWarmers(
            Context<ThermoclineCluster> context, ClusterLayout layout, String current) {
        KubernetesClient client = context.getClient();
        context.getSecondaryResourcesAsStream(Job.class)
                .filter(job -> job.getMetadata().getName().startsWith(layout.warmerPrefix()))
                .filter(job -> !job.getMetadata().getName().equals(current))
                .forEach(job -> client.batch()
                        .v1()
                        .jobs()
                        .inNamespace(layout.namespace())
                        .withName(job.getMetadata().getName())
                        .withPropagationPolicy(DeletionPropagation.BACKGROUND)
                        .delete());
    }
}
