package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.backup.BackupOperations;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.ConditionType;
import java.util.List;
import java.util.Map;

/**
 * What one reconcile decided before it acts (see {@link ClusterPlanner}): the archive as probed, the fast tier's
 * version, the rendered config, the fast tier's size and replica-set target, the backup operations and the pause.
 * {@code previous}: the status before this reconcile (an empty one for a new resource); {@code archive}: the probe's
 * report, or why the archive's Secret is unusable; {@code version}: null while the archive is not reachable;
 * {@code warmerJob}: the warmer Job of the current windows; {@code feeder}: the feeder Deployment before the workflow;
 * {@code pausing}: the step a pause waits on (null: not paused, or the feeder may stop).
 */
record ClusterPlan(
        ClusterLayout layout,
        ThermoclineClusterSpec spec,
        ThermoclineClusterStatus previous,
        ArchiveSecrets.Access access,
        ArchiveReport archive,
        VersionDecision version,
        RenderedConfig config,
        String fastTierVersion,
        FastTier fastTier,
        BackupOperations.Plan operations,
        String warmerJob,
        Deployment feeder,
        ClusterHealth.Pausing pausing) {

    /**
     * The fast tier as the informer caches hold it: the users Secret's keys, the StatefulSet ({@code current}, null
     * before it exists), whether the status says the set was ever initiated, this reconcile's replica-set target (null:
     * nothing to configure yet) and the StatefulSet's replicas to apply.
     */
    record FastTier(
            Map<String, String> users,
            StatefulSet current,
            boolean initiatedBefore,
            ReplicaSetTarget replicaSetTarget,
            int replicas) {}

    /** The workflow runs only with a valid spec and a fast-tier version. */
    boolean deploy() {
        return deploys(config, fastTierVersion);
    }

    static boolean deploys(RenderedConfig config, String fastTierVersion) {
        return config.problem() == null && fastTierVersion != null;
    }

    /** The feeder stops once a pause has drained it. */
    boolean feederStopped() {
        return spec.paused && pausing == null;
    }

    /** The archive's connection string, null without a usable Secret. */
    String archiveUri() {
        return access instanceof ArchiveSecrets.Found found ? found.connection().uri() : null;
    }

    /** What the status reports of this plan. */
    StatusReport.Planned planned() {
        return new StatusReport.Planned(
                config.problem(), archive, version, fastTierVersion, fastTier.initiatedBefore(), pausing, operations);
    }

    /** The key of a cluster in the operator's own per-cluster state. */
    static String key(ClusterLayout layout) {
        return layout.namespace() + "/" + layout.cluster();
    }

    /** Without the archive's user directory (spec.auth does not use it), its privileges for it are not wanted. */
    static ArchiveReport asUsed(ArchiveReport probed, ThermoclineClusterSpec spec) {
        return probed instanceof ArchiveReport.Reachable r && !spec.auth.usesArchive()
                ? new ArchiveReport.Reachable(
                        r.version(), r.replicaSetName(), r.privileges().withUserDirectory(false))
                : probed;
    }

    /**
     * An unreachable archive keeps the last version (so pause and scaling still apply); a refused version change keeps
     * the running one; a new cluster against an incompatible archive gets nothing.
     */
    static String fastTierVersion(VersionDecision version, ThermoclineClusterStatus previous) {
        return version != null ? version.fastTierVersion() : previous.fastTierVersion;
    }

    /**
     * Whether a pause's step needs its own Event: a Ready that turns False with the step's reason is recorded as its
     * transition, so only a step from another False reason does (and one already reported needs none).
     */
    static boolean pauseNeedsItsOwnEvent(ClusterHealth.Pausing pausing, List<Condition> previous) {
        return pausing != null
                && previous != null
                && previous.stream()
                        .anyMatch(c -> ConditionType.Ready.name().equals(c.getType())
                                && "False".equals(c.getStatus())
                                && !pausing.reason().equals(c.getReason()));
    }
}
