package io.thermocline.operator.reconcile;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.archive.ArchiveProbe;
import io.thermocline.operator.archive.ArchiveSecretWatch;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.archive.ProbeCache;
import io.thermocline.operator.backup.BackupOperations;
import io.thermocline.operator.backup.RestoreSteps;
import io.thermocline.operator.credentials.KeyfileSecretDependent;
import io.thermocline.operator.credentials.PartUserSecretDependent;
import io.thermocline.operator.credentials.PeerSecretDependent;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.fasttier.FastTierDisruptionBudgetDependent;
import io.thermocline.operator.fasttier.FastTierNetworkPolicyDependent;
import io.thermocline.operator.fasttier.FastTierServiceDependent;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.fasttier.ReplicaSetConnector;
import io.thermocline.operator.fasttier.ReplicaSetDependent;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.ModeConditions;
import io.thermocline.operator.mode.ModeDriver;
import io.thermocline.operator.mode.ModeStore;
import io.thermocline.operator.observability.ClusterGauges;
import io.thermocline.operator.observability.EvictorMetricsServiceDependent;
import io.thermocline.operator.observability.FeederMetricsServiceDependent;
import io.thermocline.operator.observability.ProxyMetricsServiceDependent;
import io.thermocline.operator.observability.ServiceMonitorDependent;
import io.thermocline.operator.observability.ServiceMonitorSupported;
import io.thermocline.operator.observability.WarmerMetricsServiceDependent;
import io.thermocline.operator.proxy.ProxyConfigMapDependent;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.proxy.ProxyDisruptionBudgetDependent;
import io.thermocline.operator.proxy.ProxyHealth;
import io.thermocline.operator.proxy.ProxyPeersServiceDependent;
import io.thermocline.operator.proxy.ProxyServiceDependent;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Conditions;
import io.thermocline.operator.status.Observed;
import io.thermocline.operator.status.TransitionEvents;
import io.thermocline.operator.tiering.EvictorCronJobDependent;
import io.thermocline.operator.tiering.FeederDeploymentDependent;
import io.thermocline.operator.tiering.TieringObserver;
import io.thermocline.operator.tiering.TieringPolling;
import io.thermocline.operator.tiering.WarmerJobDependent;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Reconciles a ThermoclineCluster as plan, workflow, report: {@link ClusterPlanner} probes the archive, decides the fast
 * tier's version, validates the rendered data-plane config and sizes the fast tier; {@link ClusterWorkflow} runs the
 * dependent-resource workflow (only against a reachable, compatible archive) and the replica-set step;
 * {@link StatusReport}, a pure function, builds the status from what was planned, done and seen.
 */
@Workflow(
        explicitInvocation = true,
        dependents = {
            @Dependent(name = "keyfile-secret", type = KeyfileSecretDependent.class),
            @Dependent(name = "users-secret", type = UsersSecretDependent.class),
            @Dependent(name = "peer-secret", type = PeerSecretDependent.class),
            // one informer for every generated Secret (the users Secret's): each part's own would hold one more watch
            @Dependent(
                    name = "proxy-user-secret",
                    type = PartUserSecretDependent.Proxy.class,
                    useEventSourceWithName = "users-secret"),
            @Dependent(
                    name = "feeder-user-secret",
                    type = PartUserSecretDependent.Feeder.class,
                    useEventSourceWithName = "users-secret"),
            @Dependent(
                    name = "evictor-user-secret",
                    type = PartUserSecretDependent.Evictor.class,
                    useEventSourceWithName = "users-secret"),
            @Dependent(
                    name = "warmer-user-secret",
                    type = PartUserSecretDependent.Warmer.class,
                    useEventSourceWithName = "users-secret"),
            @Dependent(name = "fast-tier-service", type = FastTierServiceDependent.class),
            @Dependent(
                    name = "fast-tier",
                    type = FastTierStatefulSetDependent.class,
                    dependsOn = {"keyfile-secret", "users-secret", "fast-tier-service"}),
            @Dependent(
                    name = ReplicaSetDependent.NAME,
                    type = ReplicaSetDependent.class,
                    dependsOn = {
                        "fast-tier",
                        "proxy-user-secret",
                        "feeder-user-secret",
                        "evictor-user-secret",
                        "warmer-user-secret"
                    },
                    readyPostcondition = ReplicaSetDependent.Ready.class),
            @Dependent(name = "fast-tier-pdb", type = FastTierDisruptionBudgetDependent.class),
            @Dependent(name = "fast-tier-network-policy", type = FastTierNetworkPolicyDependent.class),
            @Dependent(name = "config", type = ProxyConfigMapDependent.class),
            @Dependent(name = "proxy-service", type = ProxyServiceDependent.class),
            @Dependent(name = "proxy-peers-service", type = ProxyPeersServiceDependent.class),
            @Dependent(
                    name = "proxy",
                    type = ProxyDeploymentDependent.class,
                    dependsOn = {"config", "proxy-user-secret", "peer-secret", ReplicaSetDependent.NAME}),
            @Dependent(name = "proxy-pdb", type = ProxyDisruptionBudgetDependent.class),
            @Dependent(
                    name = "feeder",
                    type = FeederDeploymentDependent.class,
                    dependsOn = {"config", "feeder-user-secret", ReplicaSetDependent.NAME}),
            @Dependent(
                    name = "evictor",
                    type = EvictorCronJobDependent.class,
                    dependsOn = {"config", "evictor-user-secret", ReplicaSetDependent.NAME}),
            @Dependent(
                    name = "warmer",
                    type = WarmerJobDependent.class,
                    dependsOn = {"config", "warmer-user-secret", ReplicaSetDependent.NAME}),
            @Dependent(name = "proxy-metrics", type = ProxyMetricsServiceDependent.class),
            @Dependent(name = "feeder-metrics", type = FeederMetricsServiceDependent.class),
            @Dependent(name = "evictor-metrics", type = EvictorMetricsServiceDependent.class),
            @Dependent(name = "warmer-metrics", type = WarmerMetricsServiceDependent.class),
            @Dependent(
                    name = "service-monitor",
                    type = ServiceMonitorDependent.class,
                    activationCondition = ServiceMonitorSupported.class),
        })
@ControllerConfiguration(
        name = ThermoclineClusterReconciler.NAME,
        maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class ThermoclineClusterReconciler implements Reconciler<ThermoclineCluster>, Cleaner<ThermoclineCluster> {

    public static final String NAME = "thermoclinecluster";
    /** Deleting a cluster whose volumes are to be deleted waits for the feeder; this annotation skips the wait. */
    public static final String SKIP_DRAIN_ANNOTATION = "thermocline.io/skip-drain-check";

    private static final Logger LOG = Logger.getLogger(ThermoclineClusterReconciler.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    ArchiveProbe archiveProbe;

    @Inject
    ReplicaSetConnector replicaSetConnector;

    @Inject
    TieringObserver tieringObserver;

    @Inject
    ModeStore modeStore;

    @Inject
    OperatorSettings settings;

    @Inject
    ClusterGauges clusterGauges;

    @Inject
    ProxyHealth proxyHealth;

    private volatile ProbeCache probeCache;
    /** Each cluster's last replica-set step, which sizes the StatefulSet (absent after a restart: nothing shrinks until a step ran). */
    private final Map<String, ReplicaSetState> lastSteps = new ConcurrentHashMap<>();

    /**
     * Beside the workflow's informers: the archive Secrets, so a rotation reconciles at once, and the
     * tiering progress, polled off the reconcile thread.
     */
    @Override
    public List<EventSource<?, ThermoclineCluster>> prepareEventSources(
            EventSourceContext<ThermoclineCluster> context) {
        var archiveSecrets = ArchiveSecretWatch.eventSource(context);
        return List.of(
                archiveSecrets,
                TieringPolling.eventSource(context, archiveSecrets, tieringObserver, settings.tieringPollInterval()));
    }

    @Override
    public UpdateControl<ThermoclineCluster> reconcile(
            ThermoclineCluster cluster, Context<ThermoclineCluster> context) {
        ClusterPlan plan =
                new ClusterPlanner(archiveProbe, probeCache(), tieringObserver, lastSteps).plan(cluster, context);
        WorkflowOutcome workflow =
                new ClusterWorkflow(replicaSetConnector, settings, lastSteps).run(cluster, context, plan);
        BackupOperations.act(context.getClient(), cluster, plan.operations(), workflow.desired());
        return report(cluster, context, plan, workflow);
    }

    /** Drives the fleet's mode, builds the status (see {@link StatusReport}) and writes it when it changed. */
    private UpdateControl<ThermoclineCluster> report(
            ThermoclineCluster cluster,
            Context<ThermoclineCluster> context,
            ClusterPlan plan,
            WorkflowOutcome workflow) {
        StatusReport.Seen seen = Secondaries.seen(
                context,
                plan.layout(),
                plan.spec(),
                proxyHealth,
                workflow.ran() ? workflow.desired().warmerJobName() : null);
        ModeDriver.Outcome mode = driveMode(cluster, context, plan, workflow);
        StatusReport.Report report = StatusReport.of(new StatusReport.Inputs(
                plan.layout(),
                plan.spec(),
                cluster.getMetadata().getGeneration(),
                plan.previous(),
                Instant.now(),
                plan.planned(),
                workflow,
                seen,
                mode,
                StatusReport.Requeue.of(settings)));
        clusterGauges.record(plan.layout(), report.status());
        return publish(cluster, context.getClient(), plan.previous(), report);
    }

    /** The fleet's mode: the fast tier is addressed once its replica set converged. */
    private ModeDriver.Outcome driveMode(
            ThermoclineCluster cluster,
            Context<ThermoclineCluster> context,
            ClusterPlan plan,
            WorkflowOutcome workflow) {
        ThermoclineClusterSpec spec = plan.spec();
        BackupOperations.Plan operations = plan.operations();
        return ModeDriver.reconcile(
                context.getClient(),
                cluster,
                modeStore,
                workflow.replicaSet() instanceof ReplicaSetState.Converged
                        ? UsersSecretDependent.fastTierUri(
                                plan.layout(),
                                spec.fastTier.members,
                                plan.fastTier().users())
                        : null,
                plan.archiveUri(),
                () -> plan.access() instanceof ArchiveSecrets.Found found
                        ? archiveProbe.holdingData(
                                found.connection(),
                                spec.collections.stream()
                                        .map(c -> c.database + "." + c.collection)
                                        .toList())
                        : Optional.empty(),
                operations.restore().holdsModeRequests(),
                operations.restoreStatus() != null && RestoreSteps.RESTORED.equals(operations.restoreStatus().state));
    }

    /** Writes the status when it changed, with an Event per changed condition (the mode's and backups' send their own). */
    private static UpdateControl<ThermoclineCluster> publish(
            ThermoclineCluster cluster,
            KubernetesClient client,
            ThermoclineClusterStatus previous,
            StatusReport.Report report) {
        ThermoclineClusterStatus status = report.status();
        if (sameStatus(cluster.getStatus(), status)) {
            return UpdateControl.<ThermoclineCluster>noUpdate()
                    .rescheduleAfter(report.requeueMillis(), TimeUnit.MILLISECONDS);
        }
        LOG.infof(
                "event=status-changed cluster=%s/%s phase=%s",
                cluster.getMetadata().getNamespace(), cluster.getMetadata().getName(), status.phase);
        TransitionEvents.record(
                client,
                cluster,
                previous.conditions,
                status.conditions.stream()
                        .filter(c -> !ModeConditions.isMode(c.getType()))
                        .filter(c -> !BackupOperations.reportsOwnEvents(c.getType()))
                        .toList());
        cluster.setStatus(status);
        return UpdateControl.patchStatus(cluster).rescheduleAfter(report.requeueMillis(), TimeUnit.MILLISECONDS);
    }

    /** A failed reconcile (API error, bug) shows in Ready, with the operator retrying with backoff. */
    @Override
    public ErrorStatusUpdateControl<ThermoclineCluster> updateErrorStatus(
            ThermoclineCluster cluster, Context<ThermoclineCluster> context, Exception e) {
        ThermoclineClusterStatus status =
                cluster.getStatus() == null ? new ThermoclineClusterStatus() : cluster.getStatus();
        String detail = e.getMessage() == null ? "" : ": " + e.getMessage();
        String message = "reconciling failed (" + e.getClass().getSimpleName() + detail + "); the operator retries";
        status.observedGeneration = cluster.getMetadata().getGeneration();
        status.phase = ClusterHealth.PHASE_DEGRADED;
        if (message.length() > 400) {
            message = message.substring(0, 400) + "...";
        }
        status.conditions = Conditions.replace(
                status.conditions,
                Observed.isFalse(ConditionType.Ready, "ReconcileError", message),
                Optional.ofNullable(cluster.getMetadata().getGeneration()).orElse(0L),
                Instant.now());
        LOG.warnf(
                "event=reconcile-failed cluster=%s/%s error=%s",
                cluster.getMetadata().getNamespace(),
                cluster.getMetadata().getName(),
                e.getClass().getSimpleName());
        clusterGauges.record(ClusterLayout.of(cluster), status);
        cluster.setStatus(status);
        return ErrorStatusUpdateControl.patchStatus(cluster);
    }

    /** Deletion stops writes, waits for the feeder to mirror everything, then lets go: see {@link Deletion}. */
    @Override
    public DeleteControl cleanup(ThermoclineCluster cluster, Context<ThermoclineCluster> context) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        Deletion.Step step = Deletion.advance(
                context.getClient(), cluster, tieringObserver, modeStore, settings.deletionDrainTimeout());
        if (step.done()) {
            ArchiveSecretWatch.of(context).forget(ResourceID.fromResource(cluster));
            probeCache().forget(ClusterPlan.key(layout));
            lastSteps.remove(ClusterPlan.key(layout));
            clusterGauges.forget(layout);
            return DeleteControl.defaultDelete();
        }
        return DeleteControl.noFinalizerRemoval()
                .rescheduleAfter(Math.min(5_000, settings.modeStepInterval().toMillis()), TimeUnit.MILLISECONDS);
    }

    private ProbeCache probeCache() {
        if (probeCache == null) {
            probeCache = new ProbeCache(settings.archiveProbeInterval(), Clock.systemUTC());
        }
        return probeCache;
    }

    private static boolean sameStatus(ThermoclineClusterStatus before, ThermoclineClusterStatus after) {
        return before != null && Objects.equals(JSON.valueToTree(before), JSON.valueToTree(after));
    }
}
