package io.thermocline.operator.reconcile;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
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
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.archive.ArchiveProbe;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.ArchiveSecretWatch;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.archive.ProbeCache;
import io.thermocline.operator.archive.VersionPolicy;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.backup.BackupOperations;
import io.thermocline.operator.backup.RestoreSteps;
import io.thermocline.operator.credentials.KeyfileSecretDependent;
import io.thermocline.operator.credentials.PartUserSecretDependent;
import io.thermocline.operator.credentials.PeerSecretDependent;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneMounts;
import io.thermocline.operator.fasttier.FastTierDisruptionBudgetDependent;
import io.thermocline.operator.fasttier.FastTierNetworkPolicyDependent;
import io.thermocline.operator.fasttier.FastTierPods;
import io.thermocline.operator.fasttier.FastTierServiceDependent;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.fasttier.MongodArgs;
import io.thermocline.operator.fasttier.ReplicaSetConnector;
import io.thermocline.operator.fasttier.ReplicaSetDependent;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import io.thermocline.operator.fasttier.VolumeExpansion;
import io.thermocline.operator.fasttier.VolumeRecords;
import io.thermocline.operator.fasttier.tls.FastTierTlsStep;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.ModeConditions;
import io.thermocline.operator.mode.ModeDocument;
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
import io.thermocline.operator.workflow.DesiredCluster;
import io.thermocline.operator.workflow.RefusedUpdates;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Reconciles a ThermoclineCluster: probe the archive, decide the fast tier's version,
 * validate the rendered data-plane config, then run the dependent-resource workflow
 * (only against a reachable, compatible archive), configure the replica set, and report.
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
    private static final String VALIDATION_ARCHIVE_URI = "mongodb://archive.invalid:27017/?replicaSet=archive";

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
        ClusterLayout layout = ClusterLayout.of(cluster);
        ThermoclineClusterSpec spec = cluster.getSpec();
        ThermoclineClusterStatus previous =
                cluster.getStatus() == null ? new ThermoclineClusterStatus() : cluster.getStatus();
        KubernetesClient client = context.getClient();

        ArchiveSecrets.Access access =
                ArchiveSecrets.read(ArchiveSecretWatch.cached(context), layout.namespace(), spec.archive);
        ArchiveReport archive = access instanceof ArchiveSecrets.Found found
                ? probeCache().probe(layout.namespace() + "/" + layout.cluster(), found.connection(), archiveProbe)
                : ((ArchiveSecrets.Missing) access).problem();
        if (archive instanceof ArchiveReport.Reachable r
                && !spec.auth.usesArchive()) { // no user directory read from the archive
            archive = new ArchiveReport.Reachable(
                    r.version(), r.replicaSetName(), r.privileges().withUserDirectory(false));
        }
        // the guards' inputs: the status, or, for a resource re-created on retained volumes (no status), what the
        // volumes record
        String runningVersion = previous.fastTierVersion;
        String runningFcv = previous.featureCompatibilityVersion;
        if (runningVersion == null || runningFcv == null) {
            Optional<VolumeRecords.Recorded> recorded = VolumeRecords.read(context.getClient(), layout);
            runningVersion = runningVersion != null
                    ? runningVersion
                    : recorded.map(VolumeRecords.Recorded::version).orElse(null);
            runningFcv = runningFcv != null
                    ? runningFcv
                    : recorded.map(VolumeRecords.Recorded::featureCompatibilityVersion)
                            .orElse(null);
        }
        VersionDecision version = archive instanceof ArchiveReport.Reachable reachable
                ? VersionPolicy.decide(spec.fastTier, reachable.version(), runningVersion, runningFcv)
                : null;

        String configYaml = null;
        String specProblem;
        try {
            configYaml = DataPlaneConfig.toYaml(spec, layout);
            specProblem = problemOf(configYaml, layout, spec, ArchiveSecretWatch.cached(context));
        } catch (IllegalArgumentException e) {
            specProblem = e.getMessage();
        }

        // An unreachable archive keeps the last version (so pause and scaling still apply); a refused
        // version change keeps the running one; a new cluster against an incompatible archive gets nothing.
        String fastTierVersion = version != null ? version.fastTierVersion() : previous.fastTierVersion;
        boolean deploy = specProblem == null && fastTierVersion != null;
        // secondaries from the informers' caches (JOSDK keeps what this operator just wrote in them too)
        Map<String, String> users =
                UsersSecretDependent.decoded(Secondaries.named(context, Secret.class, layout.usersSecret()));
        StatefulSet current = Secondaries.named(context, StatefulSet.class, layout.fastTier());
        int running = current == null || current.getSpec().getReplicas() == null
                ? 0
                : current.getSpec().getReplicas();
        boolean initiatedBefore = Boolean.TRUE.equals(previous.replicaSetInitiated);
        ReplicaSetTarget replicaSetTarget = null;
        if (deploy && running > 0 && users.containsKey(UsersSecretDependent.ROOT_PASSWORD)) {
            replicaSetTarget = new ReplicaSetTarget(
                    layout.replicaSetName(),
                    layout.memberHosts(spec.fastTier.members),
                    layout.memberHosts(running),
                    FastTierPods.outdated(client, layout, current),
                    FastTierPods.version(current),
                    initiatedBefore,
                    users.get(UsersSecretDependent.ROOT_USERNAME),
                    users.get(UsersSecretDependent.ROOT_PASSWORD),
                    UsersSecretDependent.fastTierUsers(
                            layout, spec.collections, users, name -> Secondaries.named(context, Secret.class, name)),
                    VersionPolicy.wantedFeatureCompatibilityVersion(spec.fastTier, fastTierVersion));
        }
        // the StatefulSet is applied before the replica-set step (its dependent runs after it): it shrinks from what
        // the
        // last step left configured, so a pod goes only once an earlier reconcile removed its member
        String key = layout.namespace() + "/" + layout.cluster();
        ReplicaSetState lastStep = lastSteps.get(key);
        int fastTierReplicas = FastTierPods.replicas(
                layout,
                spec.fastTier.members,
                running,
                lastStep,
                initiatedBefore || (lastStep != null && lastStep.initiated()));

        // backup points and restores: decided before the workflow, since the warmer Job is named after the last resync
        BackupOperations.Plan operations = BackupOperations.plan(
                context,
                cluster,
                layout,
                restored -> DataPlaneConfig.warmerJobName(spec, layout, restored),
                previous.mode != null && ModeDocument.PHASE_RESTORING.equals(previous.mode.phase),
                Instant.now());
        String warmerJob =
                DataPlaneConfig.warmerJobName(spec, layout, operations.restore().lastResynced());

        Deployment feederNow = Secondaries.named(context, Deployment.class, layout.feeder());
        ClusterHealth.Pausing pausing = spec.paused && deploy
                ? Pausing.step(client, layout, feederNow, () -> Deletion.observe(client, cluster, tieringObserver))
                : null;
        // a Ready that turns False with this reason is recorded as its transition: only a step from another False
        // reason
        // needs its own Event (and one already reported needs none)
        boolean newFalseReason = pausing != null
                && previous.conditions != null
                && previous.conditions.stream()
                        .anyMatch(c -> ConditionType.Ready.name().equals(c.getType())
                                && "False".equals(c.getStatus())
                                && !pausing.reason().equals(c.getReason()));
        if (newFalseReason) {
            TransitionEvents.once(
                    client,
                    cluster,
                    pausing.reason(),
                    pausing.message(),
                    false,
                    pausing.reason() + "/" + cluster.getMetadata().getGeneration());
        }

        DesiredCluster desired = null;
        ReplicaSetState replicaSet = null;
        List<String> rejected = List.of();
        Observed certificates = null;
        if (deploy) {
            FastTierTlsStep.Result tls = FastTierTlsStep.run(
                    client,
                    cluster,
                    current,
                    new FastTierTlsStep.Clients(
                            Secondaries.named(context, Deployment.class, layout.proxy()),
                            feederNow,
                            Secondaries.named(context, Job.class, warmerJob)),
                    ArchiveSecretWatch.cached(context),
                    Instant.now());
            certificates = tls.condition();
            // the data plane's CA bundle is in its pod templates' hash: a renewed CA rolls the proxy and feeder
            String secretHash = archiveSecretHash(access)
                    + (tls.tls().clientsTls() ? "-" + tls.tls().clientBundleHash() : "");
            desired = new DesiredCluster(
                    layout,
                    spec,
                    image(spec),
                    fastTierVersion,
                    fastTierReplicas,
                    FastTierPods.claimSize(current, spec.fastTier.storage.size),
                    configYaml,
                    DataPlaneConfig.hash(configYaml),
                    secretHash,
                    warmerJob,
                    settings.namespace().orElse(null),
                    spec.paused && pausing == null,
                    tls.tls());
            desired.putInto(context);
            ServiceMonitorDependent.SelectorLabels.parse(settings.monitoringLabels())
                    .putInto(context);
            new ReplicaSetDependent.Run(replicaSetConnector, replicaSetTarget).putInto(context);
            // an object the API server refuses is reported; the others, and the replica set, are still managed
            RefusedUpdates refusedUpdates = new RefusedUpdates();
            refusedUpdates.putInto(context);
            rejected = ApiRejections.reconcile(
                    () -> context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow(),
                    refusedUpdates);
            if (rejected.isEmpty()) {
                removeObsoleteWarmers(context, layout, desired.warmerJobName());
            }
            String volumes = VolumeExpansion.apply(client, layout, fastTierReplicas, spec.fastTier.storage.size);
            if (volumes != null) {
                rejected = new ArrayList<>(rejected);
                rejected.add(volumes);
            }
            replicaSet = ReplicaSetDependent.stepOf(context);
            if (replicaSet != null) {
                lastSteps.put(key, replicaSet);
            }
            if (replicaSet instanceof ReplicaSetState.RestartMember restart) {
                FastTierPods.restart(client, layout, restart.host());
            }
            if (replicaSet instanceof ReplicaSetState.Converged converged
                    && converged.featureCompatibilityVersion() != null
                    && replicaSetTarget != null
                    && replicaSetTarget.version() != null) {
                VolumeRecords.write(
                        client,
                        layout,
                        spec.fastTier.members,
                        replicaSetTarget.version(),
                        converged.featureCompatibilityVersion());
            }
        } else {
            LOG.infof(
                    "event=workflow-held cluster=%s/%s specValid=%s archive=%s version=%s",
                    layout.namespace(),
                    layout.cluster(),
                    specProblem == null,
                    archive.getClass().getSimpleName(),
                    version == null ? "unknown" : version.reason());
        }

        WorkflowOutcome workflow =
                deploy ? new WorkflowOutcome(desired, replicaSet, rejected, certificates) : WorkflowOutcome.HELD;
        BackupOperations.act(client, cluster, operations, desired);
        StatusReport.Planned planned = new StatusReport.Planned(
                specProblem, archive, version, fastTierVersion, initiatedBefore, pausing, operations);
        return report(cluster, context, planned, workflow, access, users);
    }

    /** Drives the fleet's mode, builds the status (see {@link StatusReport}) and writes it when it changed. */
    private UpdateControl<ThermoclineCluster> report(
            ThermoclineCluster cluster,
            Context<ThermoclineCluster> context,
            StatusReport.Planned planned,
            WorkflowOutcome workflow,
            ArchiveSecrets.Access access,
            Map<String, String> users) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        ThermoclineClusterSpec spec = cluster.getSpec();
        ThermoclineClusterStatus previous =
                cluster.getStatus() == null ? new ThermoclineClusterStatus() : cluster.getStatus();
        StatusReport.Seen seen = Secondaries.seen(
                context,
                layout,
                spec,
                proxyHealth,
                workflow.ran() ? workflow.desired().warmerJobName() : null);
        ModeDriver.Outcome mode = driveMode(cluster, context, planned.operations(), workflow, access, users);
        StatusReport.Report report = StatusReport.of(new StatusReport.Inputs(
                layout,
                spec,
                cluster.getMetadata().getGeneration(),
                previous,
                Instant.now(),
                planned,
                workflow,
                seen,
                mode,
                StatusReport.Requeue.of(settings)));
        clusterGauges.record(layout, report.status());
        return publish(cluster, context.getClient(), previous, report);
    }

    /** The fleet's mode: the fast tier is addressed once its replica set converged. */
    private ModeDriver.Outcome driveMode(
            ThermoclineCluster cluster,
            Context<ThermoclineCluster> context,
            BackupOperations.Plan operations,
            WorkflowOutcome workflow,
            ArchiveSecrets.Access access,
            Map<String, String> users) {
        ThermoclineClusterSpec spec = cluster.getSpec();
        ClusterLayout layout = ClusterLayout.of(cluster);
        return ModeDriver.reconcile(
                context.getClient(),
                cluster,
                modeStore,
                workflow.replicaSet() instanceof ReplicaSetState.Converged
                        ? UsersSecretDependent.fastTierUri(layout, spec.fastTier.members, users)
                        : null,
                access instanceof ArchiveSecrets.Found found
                        ? found.connection().uri()
                        : null,
                () -> access instanceof ArchiveSecrets.Found found
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
            probeCache().forget(layout.namespace() + "/" + layout.cluster());
            lastSteps.remove(layout.namespace() + "/" + layout.cluster());
            clusterGauges.forget(layout);
            return DeleteControl.defaultDelete();
        }
        return DeleteControl.noFinalizerRemoval()
                .rescheduleAfter(Math.min(5_000, settings.modeStepInterval().toMillis()), TimeUnit.MILLISECONDS);
    }

    /**
     * Validates the rendered config the way a data-plane pod will load it, and that the Secrets it mounts
     * exist with their keys (else the pods would hang in ContainerCreating); null when all is well.
     */
    private static String problemOf(
            String configYaml, ClusterLayout layout, ThermoclineClusterSpec spec, ArchiveSecrets.Lookup secrets) {
        List<String> problems = new ArrayList<>();
        // the CRD refuses such names (CEL); a resource created under an older CRD, or where CEL is off, still gets here
        if (!layout.cluster().matches(ThermoclineCluster.NAME_PATTERN)
                || layout.cluster().length() > ThermoclineCluster.MAX_NAME_LENGTH) {
            problems.add("metadata.name " + layout.cluster()
                    + " cannot prefix the cluster's Service names (a DNS-1035 label:"
                    + " a lowercase letter first, then lowercase letters, digits and '-', at most "
                    + ThermoclineCluster.MAX_NAME_LENGTH
                    + " characters); re-create the resource under such a name");
        }
        if (spec.proxy.expose != null) {
            problems.addAll(spec.proxy.expose.problems());
        }
        problems.addAll(MongodArgs.problems(spec.fastTier.mongodArgs));
        try {
            ConfigLoader.parse(
                    configYaml,
                    DataPlaneConfig.podEnvironment(
                            VALIDATION_ARCHIVE_URI,
                            UsersSecretDependent.fastTierUri(
                                    layout, spec.fastTier.members, "validation", "validation")));
        } catch (InvalidConfigException e) {
            // the files the operator mounts into the pods are not here: they are checked as Secrets below
            e.problems().stream()
                    .filter(p -> !p.contains(ClusterLayout.CONFIG_DIR + "/") || !p.contains(" cannot be read;"))
                    .forEach(p -> problems.add("the data plane rejects the rendered config: " + p));
        }
        for (SecretKeyRef ref : DataPlaneMounts.referencedSecrets(spec)) {
            Secret secret = secrets.find(ref.name);
            if (secret == null) {
                problems.add("Secret " + layout.namespace() + "/" + ref.name
                        + " (named in spec.auth or spec.tls) does not exist; create it");
            } else if ((secret.getData() == null || !secret.getData().containsKey(ref.key))
                    && (secret.getStringData() == null
                            || !secret.getStringData().containsKey(ref.key))) {
                problems.add("Secret " + layout.namespace() + "/" + ref.name + " has no key " + ref.key + "; add it");
            }
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** Hash of the archive's connection string and CA: a rotated Secret changes the pod templates, so the pods restart. */
    private static String archiveSecretHash(ArchiveSecrets.Access access) {
        return access instanceof ArchiveSecrets.Found found
                ? DataPlaneConfig.hash(
                        found.connection().uri() + "\n" + found.connection().caPem())
                : "none";
    }

    private ProbeCache probeCache() {
        if (probeCache == null) {
            probeCache = new ProbeCache(settings.archiveProbeInterval(), Clock.systemUTC());
        }
        return probeCache;
    }

    private String image(ThermoclineClusterSpec spec) {
        return spec.image == null || spec.image.isBlank() ? settings.dataPlaneImage() : spec.image;
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

    private static boolean sameStatus(ThermoclineClusterStatus before, ThermoclineClusterStatus after) {
        return before != null && Objects.equals(JSON.valueToTree(before), JSON.valueToTree(after));
    }
}
