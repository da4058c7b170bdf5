package io.thermocline.operator.reconcile;

import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.backup.BackupOperations;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.ModeDriver;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.ClusterHealth.Health;
import io.thermocline.operator.status.ClusterHealth.Replicas;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Conditions;
import io.thermocline.operator.status.Observed;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The status one reconcile reports, and when it looks again: a pure function of what the plan decided, what the workflow
 * did and what was seen afterwards. What was not observed this time keeps its last value rather than flapping to empty.
 */
final class StatusReport {

    /** What the plan decided before the workflow ran. */
    record Planned(
            String specProblem,
            ArchiveReport archive,
            VersionDecision version,
            String fastTierVersion,
            boolean initiatedBefore,
            ClusterHealth.Pausing pausing,
            BackupOperations.Plan operations) {}

    /**
     * What the informer caches and the poller held after the workflow. {@code fastTier} null: no StatefulSet;
     * {@code membersUpToDate}: members whose pod runs the StatefulSet's current template; {@code tiering} null: no
     * snapshot yet; {@code warmer} null: no Job of the current windows.
     */
    record Seen(
            Replicas fastTier,
            Integer membersUpToDate,
            Replicas proxy,
            Replicas feeder,
            TieringSnapshot tiering,
            ClusterHealth.Warmer warmer) {}

    /** The operator's intervals that decide when a cluster is reconciled again. */
    record Requeue(Duration replicaSetStep, Duration archiveProbe, Duration modeStep) {

        static Requeue of(OperatorSettings settings) {
            return new Requeue(
                    settings.replicaSetStepInterval(), settings.archiveProbeInterval(), settings.modeStepInterval());
        }

        /**
         * A replica-set reconfiguration advances one step per reconcile: come back soon for the next; otherwise the
         * archive is probed again (a version change there is followed) every probe interval; a mode transition is
         * followed at its own pace.
         */
        long millis(ReplicaSetState replicaSet, boolean ready, boolean modeSettling) {
            long millis = replicaSet != null && !(replicaSet instanceof ReplicaSetState.Converged)
                    ? replicaSetStep.toMillis()
                    : Math.max(1_000, Math.min(ready ? 60_000 : 15_000, archiveProbe.toMillis()));
            return modeSettling ? Math.min(millis, modeStep.toMillis()) : millis;
        }
    }

    /** {@code previous}: the status before this reconcile (an empty one for a new resource). */
    record Inputs(
            ClusterLayout layout,
            ThermoclineClusterSpec spec,
            Long generation,
            ThermoclineClusterStatus previous,
            Instant now,
            Planned planned,
            WorkflowOutcome workflow,
            Seen seen,
            ModeDriver.Outcome mode,
            Requeue requeue) {}

    /** The status to write, and after how many milliseconds to reconcile again. */
    record Report(ThermoclineClusterStatus status, long requeueMillis) {}

    private StatusReport() {}

    static Report of(Inputs in) {
        Health health = ClusterHealth.evaluate(health(in));
        ThermoclineClusterStatus status = new ThermoclineClusterStatus();
        status.observedGeneration = in.generation();
        status.phase = health.phase();
        status.conditions = Conditions.merge(
                in.previous().conditions,
                conditions(in, health),
                Optional.ofNullable(in.generation()).orElse(0L),
                in.now());
        versions(in, status);
        members(in, status);
        tiering(in, status);
        status.mode = in.mode().status();
        status.backupPoint = in.planned().operations().pointStatus();
        status.restore = in.planned().operations().restoreStatus();
        long requeueMillis = in.requeue()
                .millis(in.workflow().replicaSet(), health.ready(), in.mode().settling());
        return new Report(status, requeueMillis);
    }

    private static ClusterHealth.Inputs health(Inputs in) {
        Planned planned = in.planned();
        Seen seen = in.seen();
        return new ClusterHealth.Inputs(
                in.spec().paused,
                planned.specProblem(),
                planned.archive(),
                planned.version(),
                seen.fastTier(),
                in.workflow().replicaSet(),
                seen.proxy(),
                seen.feeder(),
                seen.tiering(),
                in.spec().feeder.maxLagSeconds,
                in.previous().phase,
                in.workflow().rejected(),
                planned.pausing(),
                seen.warmer(),
                ClusterHealth.lastFeederObservation(in.previous().conditions));
    }

    /** The cluster's health, the mode's, the backup operations' and the certificates' conditions. */
    private static List<Observed> conditions(Inputs in, Health health) {
        List<Observed> observed = new ArrayList<>(health.conditions());
        observed.addAll(in.mode().conditions());
        observed.addAll(in.planned().operations().conditions());
        if (in.workflow().certificates() != null) {
            observed.add(in.workflow().certificates());
        } else if (!in.workflow().ran()
                && Conditions.find(in.previous().conditions, ConditionType.CertificatesReady) != null) {
            observed.add(Observed.unknown(
                    ConditionType.CertificatesReady, "NotChecked", "the workflow is held (see Ready)"));
        }
        return observed;
    }

    /** An unreachable archive keeps the last version; a held workflow keeps the fast tier's last version. */
    private static void versions(Inputs in, ThermoclineClusterStatus status) {
        ThermoclineClusterStatus previous = in.previous();
        boolean ran = in.workflow().ran();
        status.connectionString =
                in.seen().fastTier() != null || ran ? in.layout().proxyConnectionString(in.spec().proxy.port) : null;
        status.archiveVersion =
                in.planned().archive() instanceof ArchiveReport.Reachable r ? r.version() : previous.archiveVersion;
        status.fastTierVersion = ran ? in.planned().fastTierVersion() : previous.fastTierVersion;
        status.featureCompatibilityVersion = in.workflow().replicaSet() instanceof ReplicaSetState.Converged c
                        && c.featureCompatibilityVersion() != null
                ? c.featureCompatibilityVersion()
                : previous.featureCompatibilityVersion;
    }

    private static void members(Inputs in, ThermoclineClusterStatus status) {
        ReplicaSetState replicaSet = in.workflow().replicaSet();
        boolean initiated = in.planned().initiatedBefore() || (replicaSet != null && replicaSet.initiated());
        status.replicaSetInitiated = initiated ? Boolean.TRUE : null;
        Replicas fastTier = in.seen().fastTier();
        status.members = fastTier == null ? null : fastTier.ready() + "/" + fastTier.desired();
        status.membersUpdated = in.seen().membersUpToDate() == null
                ? null
                : in.seen().membersUpToDate() + "/" + in.spec().fastTier.members;
        Replicas proxy = in.seen().proxy();
        status.proxies = proxy == null ? null : proxy.ready() + "/" + (in.spec().paused ? 0 : proxy.desired());
    }

    /** The feeder's progress and the warnings come from the poller's last snapshot, the warmer from the workflow. */
    private static void tiering(Inputs in, ThermoclineClusterStatus status) {
        ThermoclineClusterStatus previous = in.previous();
        TieringSnapshot tiering = in.seen().tiering();
        status.feederLagSeconds = tiering != null ? tiering.feederLagSeconds() : previous.feederLagSeconds;
        // an archive outage leaves its count and the index gaps unread (null): the last ones read stand meanwhile
        boolean archiveRead = tiering != null && tiering.archiveDocuments() != null;
        status.documents = tiering == null
                ? previous.documents
                : new ThermoclineClusterStatus.DocumentCounts(
                        tiering.fastTierDocuments(),
                        archiveRead
                                ? tiering.archiveDocuments()
                                : previous.documents == null ? null : previous.documents.archive);
        status.warmerJob = in.workflow().ran() ? in.workflow().desired().warmerJobName() : previous.warmerJob;
        status.warnings = archiveRead ? warnings(tiering) : previous.warnings;
    }

    private static List<String> warnings(TieringSnapshot tiering) {
        List<String> warnings = tiering.uniqueIndexes();
        return warnings.isEmpty() ? null : warnings;
    }
}
