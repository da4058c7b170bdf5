package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
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
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.fasttier.FastTierPods;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import io.thermocline.operator.fasttier.VolumeRecords;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.ModeDocument;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.TransitionEvents;
import io.thermocline.operator.tiering.TieringObserver;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * Decides what one reconcile does, before it acts: probes the archive, decides the fast tier's version, renders and
 * validates the config, sizes the fast tier, plans the backup operations and takes a pause's step (the only acts here:
 * a paused proxy's feeder is stopped only once drained, and that step's Event).
 */
final class ClusterPlanner {

    private final ArchiveProbe archiveProbe;
    private final ProbeCache probeCache;
    private final TieringObserver tieringObserver;
    /** Each cluster's last replica-set step, which sizes the StatefulSet. */
    private final Map<String, ReplicaSetState> lastSteps;

    ClusterPlanner(
            ArchiveProbe archiveProbe,
            ProbeCache probeCache,
            TieringObserver tieringObserver,
            Map<String, ReplicaSetState> lastSteps) {
        this.archiveProbe = archiveProbe;
        this.probeCache = probeCache;
        this.tieringObserver = tieringObserver;
        this.lastSteps = lastSteps;
    }

    ClusterPlan plan(ThermoclineCluster cluster, Context<ThermoclineCluster> context) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        ThermoclineClusterSpec spec = cluster.getSpec();
        ThermoclineClusterStatus previous =
                cluster.getStatus() == null ? new ThermoclineClusterStatus() : cluster.getStatus();
        ArchiveSecrets.Access access =
                ArchiveSecrets.read(ArchiveSecretWatch.cached(context), layout.namespace(), spec.archive);
        ArchiveReport archive = ClusterPlan.asUsed(probe(layout, access), spec);
        VersionDecision version = version(context.getClient(), layout, spec, previous, archive);
        RenderedConfig config = RenderedConfig.of(layout, spec, ArchiveSecretWatch.cached(context));
        String fastTierVersion = ClusterPlan.fastTierVersion(version, previous);
        ClusterPlan.FastTier fastTier = fastTier(
                context, layout, spec, previous, ClusterPlan.deploys(config, fastTierVersion), fastTierVersion);
        BackupOperations.Plan operations = operations(cluster, context, layout, previous);
        String warmerJob =
                DataPlaneConfig.warmerJobName(spec, layout, operations.restore().lastResynced());
        Deployment feeder = Secondaries.named(context, Deployment.class, layout.feeder());
        ClusterHealth.Pausing pausing = spec.paused && ClusterPlan.deploys(config, fastTierVersion)
                ? pause(cluster, context.getClient(), layout, feeder, previous)
                : null;
        return new ClusterPlan(
                layout,
                spec,
                previous,
                access,
                archive,
                version,
                config,
                fastTierVersion,
                fastTier,
                operations,
                warmerJob,
                feeder,
                pausing);
    }

    /** Backup points and restores: decided before the workflow, since the warmer Job is named after the last resync. */
    private static BackupOperations.Plan operations(
            ThermoclineCluster cluster,
            Context<ThermoclineCluster> context,
            ClusterLayout layout,
            ThermoclineClusterStatus previous) {
        return BackupOperations.plan(
                context,
                cluster,
                layout,
                restored -> DataPlaneConfig.warmerJobName(cluster.getSpec(), layout, restored),
                previous.mode != null && ModeDocument.PHASE_RESTORING.equals(previous.mode.phase),
                Instant.now());
    }

    private ArchiveReport probe(ClusterLayout layout, ArchiveSecrets.Access access) {
        return access instanceof ArchiveSecrets.Found found
                ? probeCache.probe(ClusterPlan.key(layout), found.connection(), archiveProbe)
                : ((ArchiveSecrets.Missing) access).problem();
    }

    /**
     * The version guards' inputs: the status, or, for a resource re-created on retained volumes (no status), what the
     * volumes record. Null while the archive is not reachable.
     */
    private static VersionDecision version(
            KubernetesClient client,
            ClusterLayout layout,
            ThermoclineClusterSpec spec,
            ThermoclineClusterStatus previous,
            ArchiveReport archive) {
        String runningVersion = previous.fastTierVersion;
        String runningFcv = previous.featureCompatibilityVersion;
        if (runningVersion == null || runningFcv == null) {
            Optional<VolumeRecords.Recorded> recorded = VolumeRecords.read(client, layout);
            runningVersion = runningVersion != null
                    ? runningVersion
                    : recorded.map(VolumeRecords.Recorded::version).orElse(null);
            runningFcv = runningFcv != null
                    ? runningFcv
                    : recorded.map(VolumeRecords.Recorded::featureCompatibilityVersion)
                            .orElse(null);
        }
        return archive instanceof ArchiveReport.Reachable reachable
                ? VersionPolicy.decide(spec.fastTier, reachable.version(), runningVersion, runningFcv)
                : null;
    }

    /**
     * The StatefulSet is applied before the replica-set step (its dependent runs after it): it shrinks from what the
     * last step left configured, so a pod goes only once an earlier reconcile removed its member.
     */
    private ClusterPlan.FastTier fastTier(
            Context<ThermoclineCluster> context,
            ClusterLayout layout,
            ThermoclineClusterSpec spec,
            ThermoclineClusterStatus previous,
            boolean deploy,
            String fastTierVersion) {
        Map<String, String> users =
                UsersSecretDependent.decoded(Secondaries.named(context, Secret.class, layout.usersSecret()));
        StatefulSet current = Secondaries.named(context, StatefulSet.class, layout.fastTier());
        int running = current == null || current.getSpec().getReplicas() == null
                ? 0
                : current.getSpec().getReplicas();
        boolean initiatedBefore = Boolean.TRUE.equals(previous.replicaSetInitiated);
        ReplicaSetTarget target = deploy && running > 0 && users.containsKey(UsersSecretDependent.ROOT_PASSWORD)
                ? replicaSetTarget(context, layout, spec, users, current, initiatedBefore, fastTierVersion)
                : null;
        ReplicaSetState lastStep = lastSteps.get(ClusterPlan.key(layout));
        int replicas = FastTierPods.replicas(
                layout,
                spec.fastTier.members,
                running,
                lastStep,
                initiatedBefore || (lastStep != null && lastStep.initiated()));
        return new ClusterPlan.FastTier(users, current, initiatedBefore, target, replicas);
    }

    private static ReplicaSetTarget replicaSetTarget(
            Context<ThermoclineCluster> context,
            ClusterLayout layout,
            ThermoclineClusterSpec spec,
            Map<String, String> users,
            StatefulSet current,
            boolean initiatedBefore,
            String fastTierVersion) {
        return new ReplicaSetTarget(
                layout.replicaSetName(),
                layout.memberHosts(spec.fastTier.members),
                layout.memberHosts(current.getSpec().getReplicas()),
                FastTierPods.outdated(context.getClient(), layout, current),
                FastTierPods.version(current),
                initiatedBefore,
                users.get(UsersSecretDependent.ROOT_USERNAME),
                users.get(UsersSecretDependent.ROOT_PASSWORD),
                UsersSecretDependent.fastTierUsers(
                        layout, spec.collections, users, name -> Secondaries.named(context, Secret.class, name)),
                VersionPolicy.wantedFeatureCompatibilityVersion(spec.fastTier, fastTierVersion));
    }

    /** A pause's step (see {@link Pausing}), with an Event when it is not recorded as Ready's transition. */
    private ClusterHealth.Pausing pause(
            ThermoclineCluster cluster,
            KubernetesClient client,
            ClusterLayout layout,
            Deployment feeder,
            ThermoclineClusterStatus previous) {
        ClusterHealth.Pausing pausing =
                Pausing.step(client, layout, feeder, () -> Deletion.observe(client, cluster, tieringObserver));
        if (ClusterPlan.pauseNeedsItsOwnEvent(pausing, previous.conditions)) {
            TransitionEvents.once(
                    client,
                    cluster,
                    pausing.reason(),
                    pausing.message(),
                    false,
                    pausing.reason() + "/" + cluster.getMetadata().getGeneration());
        }
        return pausing;
    }
}
