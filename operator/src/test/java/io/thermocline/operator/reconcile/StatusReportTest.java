package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.thermocline.operator.api.v1alpha1.BackupPointStatus;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.RestoreStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.backup.BackupOperations;
import io.thermocline.operator.backup.BackupPointSteps;
import io.thermocline.operator.backup.RestoreSteps;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.kit.FixedOperatorSettings;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.ModeDriver;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.ClusterHealth.Replicas;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import io.thermocline.operator.tiering.TieringSnapshot;
import io.thermocline.operator.workflow.DesiredCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The status a reconcile writes, field by field, from what it planned, did and saw: no Quarkus, no API server. */
@Timeout(60)
class StatusReportTest {

    private static final Instant NOW = Instant.parse("2026-12-07T11:00:00.400Z");
    private static final String EARLIER = "2026-12-06T09:00:00Z";
    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");
    private static final StatusReport.Requeue INTERVALS =
            new StatusReport.Requeue(Duration.ofSeconds(3), Duration.ofSeconds(30), Duration.ofSeconds(5));
    private static final ReplicaSetState CONVERGED =
            new ReplicaSetState.Converged(List.of("orders-fast-0", "orders-fast-1", "orders-fast-2"), "7.0");
    private static final ReplicaSetState CONVERGING = new ReplicaSetState.Converging(
            "AddingMember", "adding orders-fast-2", List.of("orders-fast-0", "orders-fast-1"));
    private static final Observed MODE_ACTIVE = Observed.isTrue(ConditionType.ModeActive, "Tiered", "tiered");
    private static final Observed BACKUP_POINT =
            Observed.isTrue(ConditionType.BackupPointReached, "Reached", "backup point nightly reached");
    private static final Observed CERTIFICATES =
            Observed.isTrue(ConditionType.CertificatesReady, "Valid", "valid until 2027");

    /**
     * The inputs of a deployed, ready cluster of generation 4 (3/3 members, 2 up to date, converged at FCV 7.0, 2/2
     * proxies, the feeder at 7 s of lag, the warmer done, mode tiered, a backup point reached, certificates valid),
     * which a test changes field by field before it reports.
     */
    private static final class Given {
        final ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        Long generation = 4L;
        ThermoclineClusterStatus previous = new ThermoclineClusterStatus();
        String specProblem;
        ArchiveReport archive = new ArchiveReport.Reachable("7.0.14", "rs0");
        VersionDecision version = new VersionDecision(true, "7.0.14", "MatchesArchive", "ok");
        String fastTierVersion = "7.0.14";
        boolean initiatedBefore = true;
        ClusterHealth.Pausing pausing;
        BackupPointStatus backupPoint = new BackupPointStatus();
        RestoreStatus restore = new RestoreStatus();
        Observed backupPointCondition = BACKUP_POINT;
        boolean workflowRan = true;
        ReplicaSetState replicaSet = CONVERGED;
        List<String> rejected = List.of();
        Observed certificates = CERTIFICATES;
        Replicas fastTier = new Replicas(3, 3);
        Integer membersUpToDate = 2;
        Replicas proxy = new Replicas(2, 2);
        Replicas feeder = new Replicas(1, 1);
        TieringSnapshot tiering = new TieringSnapshot(7L, true, 120L, 4_000L);
        ClusterHealth.Warmer warmer = new ClusterHealth.Warmer("orders-warmer-1a2b", true, null);
        ModeStatus modeStatus = new ModeStatus();
        List<Observed> modeConditions = List.of(MODE_ACTIVE);
        boolean modeSettling;

        StatusReport.Report report() {
            BackupOperations.Plan operations = new BackupOperations.Plan(
                    new BackupPointSteps.Step(backupPoint, false, backupPointCondition),
                    new RestoreSteps.Step(restore, null, null, false),
                    null,
                    0);
            WorkflowOutcome workflow = workflowRan
                    ? new WorkflowOutcome(desired(), replicaSet, rejected, certificates)
                    : WorkflowOutcome.HELD;
            return StatusReport.of(new StatusReport.Inputs(
                    LAYOUT,
                    spec,
                    generation,
                    previous,
                    NOW,
                    new StatusReport.Planned(
                            specProblem, archive, version, fastTierVersion, initiatedBefore, pausing, operations),
                    workflow,
                    new StatusReport.Seen(fastTier, membersUpToDate, proxy, feeder, tiering, warmer),
                    new ModeDriver.Outcome(modeStatus, modeConditions, modeSettling),
                    INTERVALS));
        }

        ThermoclineClusterStatus status() {
            return report().status();
        }

        private DesiredCluster desired() {
            return new DesiredCluster(
                    LAYOUT, spec, "img", fastTierVersion, 3, "10Gi", "", "", "", "orders-warmer-1a2b", null, false);
        }

        /** The workflow held (no fast-tier version, or an invalid spec): nothing applied, nothing stepped. */
        Given held() {
            workflowRan = false;
            replicaSet = null;
            certificates = null;
            return this;
        }
    }

    /** The status a previous reconcile wrote: versions, counts and the warmer Job it saw then. */
    private static ThermoclineClusterStatus earlierStatus(Condition... conditions) {
        ThermoclineClusterStatus previous = new ThermoclineClusterStatus();
        previous.phase = "Ready";
        previous.archiveVersion = "6.0.19";
        previous.fastTierVersion = "6.0.19";
        previous.featureCompatibilityVersion = "6.0";
        previous.feederLagSeconds = 42L;
        previous.documents = new ThermoclineClusterStatus.DocumentCounts(1L, 2L);
        previous.warnings = List.of("an earlier warning");
        previous.warmerJob = "orders-warmer-old";
        previous.conditions = List.of(conditions);
        return previous;
    }

    private static Condition condition(ConditionType type, String status, String reason) {
        return new ConditionBuilder()
                .withType(type.name())
                .withStatus(status)
                .withReason(reason)
                .withMessage("before")
                .withObservedGeneration(3L)
                .withLastTransitionTime(EARLIER)
                .build();
    }

    private static Condition find(ThermoclineClusterStatus status, ConditionType type) {
        return status.conditions.stream()
                .filter(c -> c.getType().equals(type.name()))
                .findFirst()
                .orElse(null);
    }

    @Test
    void aReadyClusterReportsEveryField() {
        Given given = new Given();
        given.backupPoint.request = "nightly";
        given.restore.name = "r1";
        given.modeStatus.requested = "tiered";
        ThermoclineClusterStatus status = given.status();

        assertThat(status.observedGeneration).isEqualTo(4L);
        assertThat(status.phase).isEqualTo("Ready");
        assertThat(status.connectionString).isEqualTo("mongodb://orders-proxy.shop.svc:27017/");
        assertThat(status.archiveVersion).isEqualTo("7.0.14");
        assertThat(status.fastTierVersion).isEqualTo("7.0.14");
        assertThat(status.featureCompatibilityVersion).isEqualTo("7.0");
        assertThat(status.replicaSetInitiated).isTrue();
        assertThat(status.members).isEqualTo("3/3");
        assertThat(status.membersUpdated).isEqualTo("2/3");
        assertThat(status.proxies).isEqualTo("2/2");
        assertThat(status.feederLagSeconds).isEqualTo(7L);
        assertThat(status.documents.fastTier).isEqualTo(120L);
        assertThat(status.documents.archive).isEqualTo(4_000L);
        assertThat(status.warnings)
                .as("no unique-index gap: no warnings at all")
                .isNull();
        assertThat(status.warmerJob).isEqualTo("orders-warmer-1a2b");
        assertThat(status.mode.requested).isEqualTo("tiered");
        assertThat(status.backupPoint.request).isEqualTo("nightly");
        assertThat(status.restore.name).isEqualTo("r1");
    }

    @Test
    void conditionsAreTheHealthsThenTheModesTheOperationsAndTheCertificates() {
        ThermoclineClusterStatus status = new Given().status();

        assertThat(status.conditions)
                .extracting(Condition::getType)
                .containsExactly(
                        "Ready",
                        "ArchiveReachable",
                        "VersionCompatible",
                        "FastTierReady",
                        "ProxyReady",
                        "FeederHealthy",
                        "ResourcesApplied",
                        "Warmed",
                        "ModeActive",
                        "BackupPointReached",
                        "CertificatesReady");
        assertThat(status.conditions).allSatisfy(c -> {
            assertThat(c.getObservedGeneration()).isEqualTo(4L);
            assertThat(c.getLastTransitionTime())
                    .as("a new condition: now, in seconds")
                    .isEqualTo("2026-12-07T11:00:00Z");
        });
        assertThat(find(status, ConditionType.Ready).getStatus()).isEqualTo("True");
        assertThat(find(status, ConditionType.ModeActive).getReason()).isEqualTo("Tiered");
        assertThat(find(status, ConditionType.BackupPointReached).getMessage())
                .isEqualTo("backup point nightly reached");
        assertThat(find(status, ConditionType.CertificatesReady).getReason()).isEqualTo("Valid");
    }

    @Test
    void anUnchangedConditionKeepsItsTransitionTimeAChangedOneMoves() {
        Given given = new Given();
        given.previous = earlierStatus(
                condition(ConditionType.Ready, "True", "AllComponentsReady"),
                condition(ConditionType.ProxyReady, "False", "NotReady"));

        ThermoclineClusterStatus status = given.status();

        assertThat(find(status, ConditionType.Ready).getLastTransitionTime()).isEqualTo(EARLIER);
        assertThat(find(status, ConditionType.Ready).getObservedGeneration()).isEqualTo(4L);
        assertThat(find(status, ConditionType.ProxyReady).getLastTransitionTime())
                .isEqualTo("2026-12-07T11:00:00Z");
    }

    @Test
    void aResourceWithoutGenerationReportsConditionsOfGenerationZero() {
        Given given = new Given();
        given.generation = null;

        ThermoclineClusterStatus status = given.status();

        assertThat(status.observedGeneration).isNull();
        assertThat(status.conditions)
                .allSatisfy(c -> assertThat(c.getObservedGeneration()).isZero());
    }

    @Test
    void aHeldWorkflowKeepsTheLastVersionsAndWarmerJob() {
        Given given = new Given().held();
        given.previous = earlierStatus();
        given.archive = new ArchiveReport.Unusable("Unreachable", "no answer");
        given.version = null;
        given.fastTier = null;
        given.membersUpToDate = null;

        ThermoclineClusterStatus status = given.status();

        assertThat(status.connectionString).as("no fast tier, nothing deployed").isNull();
        assertThat(status.archiveVersion).isEqualTo("6.0.19");
        assertThat(status.fastTierVersion).isEqualTo("6.0.19");
        assertThat(status.featureCompatibilityVersion).isEqualTo("6.0");
        assertThat(status.warmerJob).isEqualTo("orders-warmer-old");
        assertThat(status.members).isNull();
        assertThat(status.membersUpdated).isNull();
        assertThat(find(status, ConditionType.Ready).getStatus()).isEqualTo("False");
    }

    @Test
    void aHeldWorkflowOverARunningFastTierStillNamesTheConnectionString() {
        Given given = new Given().held();
        given.previous = earlierStatus();

        ThermoclineClusterStatus status = given.status();

        assertThat(status.connectionString).isEqualTo("mongodb://orders-proxy.shop.svc:27017/");
        assertThat(status.archiveVersion)
                .as("the archive answered: its version now")
                .isEqualTo("7.0.14");
        assertThat(status.fastTierVersion).as("nothing was applied").isEqualTo("6.0.19");
    }

    @Test
    void aDeployedClusterWithoutItsStatefulSetYetNamesTheConnectionString() {
        Given given = new Given();
        given.fastTier = null;
        given.membersUpToDate = null;

        assertThat(given.status().connectionString).isEqualTo("mongodb://orders-proxy.shop.svc:27017/");
    }

    @Test
    void certificatesOnceReportedAreNotCheckedWhileTheWorkflowIsHeld() {
        Given reportedBefore = new Given().held();
        reportedBefore.previous = earlierStatus(condition(ConditionType.CertificatesReady, "True", "Valid"));
        Condition certificates = find(reportedBefore.status(), ConditionType.CertificatesReady);
        assertThat(certificates.getStatus()).isEqualTo("Unknown");
        assertThat(certificates.getReason()).isEqualTo("NotChecked");
        assertThat(certificates.getMessage()).isEqualTo("the workflow is held (see Ready)");

        Given neverReported = new Given().held();
        assertThat(find(neverReported.status(), ConditionType.CertificatesReady))
                .isNull();

        Given ranWithoutTls = new Given();
        ranWithoutTls.certificates = null;
        ranWithoutTls.previous = earlierStatus(condition(ConditionType.CertificatesReady, "True", "Valid"));
        assertThat(find(ranWithoutTls.status(), ConditionType.CertificatesReady))
                .as("the workflow ran and reported no TLS: the condition goes")
                .isNull();
    }

    @Test
    void theFeatureCompatibilityVersionIsTheConvergedSetsOrTheLastOne() {
        Given converging = new Given();
        converging.previous = earlierStatus();
        converging.replicaSet = CONVERGING;
        assertThat(converging.status().featureCompatibilityVersion).isEqualTo("6.0");

        Given unreadFcv = new Given();
        unreadFcv.previous = earlierStatus();
        unreadFcv.replicaSet = new ReplicaSetState.Converged(List.of("orders-fast-0"), null);
        assertThat(unreadFcv.status().featureCompatibilityVersion).isEqualTo("6.0");
    }

    @Test
    void theReplicaSetIsInitiatedOnceEitherBeforeOrByThisStep() {
        Given never = new Given();
        never.initiatedBefore = false;
        never.replicaSet = new ReplicaSetState.Converging("NotInitiated", "waiting for members", List.of());
        assertThat(never.status().replicaSetInitiated).isNull();

        Given now = new Given();
        now.initiatedBefore = false;
        assertThat(now.status().replicaSetInitiated).isTrue();

        Given before = new Given().held();
        assertThat(before.status().replicaSetInitiated).isTrue();
    }

    @Test
    void countsAreReadyOverWantedAndAPausedProxyWantsNone() {
        Given given = new Given();
        given.fastTier = new Replicas(5, 2);
        given.membersUpToDate = 1;
        given.spec.fastTier.members = 5;
        given.proxy = new Replicas(3, 1);
        assertThat(given.status().members).isEqualTo("2/5");
        assertThat(given.status().membersUpdated).isEqualTo("1/5");
        assertThat(given.status().proxies).isEqualTo("1/3");

        given.spec.paused = true;
        assertThat(given.status().proxies).isEqualTo("1/0");

        given.proxy = null;
        assertThat(given.status().proxies).isNull();
    }

    @Test
    void anUnreadTieringSnapshotKeepsTheLastLagDocumentsAndWarnings() {
        Given given = new Given();
        given.previous = earlierStatus();
        given.tiering = null;

        ThermoclineClusterStatus status = given.status();

        assertThat(status.feederLagSeconds).isEqualTo(42L);
        assertThat(status.documents.fastTier).isEqualTo(1L);
        assertThat(status.documents.archive).isEqualTo(2L);
        assertThat(status.warnings).containsExactly("an earlier warning");
    }

    @Test
    void aSnapshotReplacesTheWarningsWithItsUniqueIndexGaps() {
        Given gaps = new Given();
        gaps.previous = earlierStatus();
        gaps.tiering = new TieringSnapshot(0L, true, 1L, 1L, List.of("shop.orders: sku is unique in the archive only"));
        assertThat(gaps.status().warnings).containsExactly("shop.orders: sku is unique in the archive only");

        Given none = new Given();
        none.previous = earlierStatus();
        assertThat(none.status().warnings).as("the earlier warning is gone").isNull();
    }

    @Test
    void aRefusedObjectAndAPauseReachTheHealthConditions() {
        Given refused = new Given();
        refused.rejected = List.of("Service orders-proxy: spec.clusterIP is immutable");
        assertThat(find(refused.status(), ConditionType.ResourcesApplied).getStatus())
                .isEqualTo("False");
        assertThat(refused.status().phase).isNotEqualTo("Ready");

        Given pausing = new Given();
        pausing.spec.paused = true;
        pausing.pausing = new ClusterHealth.Pausing("PausingWaitingForFeeder", "the feeder mirrors the rest");
        assertThat(find(pausing.status(), ConditionType.Ready).getReason()).isEqualTo("PausingWaitingForFeeder");

        Given invalid = new Given().held();
        invalid.specProblem = "metadata.name Orders cannot prefix the cluster's Service names";
        assertThat(find(invalid.status(), ConditionType.Ready).getReason()).isEqualTo("InvalidSpec");
        assertThat(invalid.status().phase).isEqualTo("Failed");
    }

    @Test
    void aReplicaSetStepComesBackAfterTheStepInterval() {
        Given given = new Given();
        given.replicaSet = CONVERGING;
        assertThat(given.report().requeueMillis()).isEqualTo(3_000);

        given.replicaSet = new ReplicaSetState.RestartMember(
                "orders-fast-1", "Restarting", "restarting orders-fast-1", List.of("orders-fast-0"));
        assertThat(given.report().requeueMillis()).isEqualTo(3_000);
    }

    @Test
    void otherwiseTheArchiveIsProbedAgainAtMostEveryMinuteWhenReadyAndEveryFifteenSecondsWhenNot() {
        StatusReport.Requeue everyTenMinutes =
                new StatusReport.Requeue(Duration.ofSeconds(3), Duration.ofMinutes(10), Duration.ofSeconds(5));
        assertThat(everyTenMinutes.millis(CONVERGED, true, false)).isEqualTo(60_000);
        assertThat(everyTenMinutes.millis(CONVERGED, false, false)).isEqualTo(15_000);
        assertThat(everyTenMinutes.millis(null, true, false)).isEqualTo(60_000);
        assertThat(INTERVALS.millis(CONVERGED, true, false))
                .as("the probe interval, below a minute")
                .isEqualTo(30_000);
        StatusReport.Requeue tiny =
                new StatusReport.Requeue(Duration.ofSeconds(3), Duration.ofMillis(10), Duration.ofSeconds(5));
        assertThat(tiny.millis(CONVERGED, true, false)).as("at least a second").isEqualTo(1_000);

        Given ready = new Given();
        assertThat(ready.report().requeueMillis()).isEqualTo(30_000);
    }

    @Test
    void aSettlingModeComesBackAfterTheModeStepIntervalWhenThatIsSooner() {
        assertThat(INTERVALS.millis(CONVERGED, true, true)).isEqualTo(5_000);
        assertThat(INTERVALS.millis(CONVERGING, true, true))
                .as("the replica-set step is sooner")
                .isEqualTo(3_000);

        Given settling = new Given();
        settling.modeSettling = true;
        assertThat(settling.report().requeueMillis()).isEqualTo(5_000);
    }

    @Test
    void aClusterNotReadyComesBackSoonerThanAReadyOne() {
        Given notReady = new Given();
        notReady.proxy = new Replicas(2, 0);

        StatusReport.Report report = notReady.report();

        assertThat(find(report.status(), ConditionType.Ready).getStatus()).isEqualTo("False");
        assertThat(report.requeueMillis()).isEqualTo(15_000);
    }

    @Test
    void theIntervalsAreTheOperatorSettings() {
        OperatorSettings settings = new FixedOperatorSettings(
                "img",
                Duration.ofSeconds(20),
                Duration.ofSeconds(30),
                Duration.ofSeconds(2),
                Duration.ofSeconds(4),
                Duration.ofMinutes(30));
        assertThat(StatusReport.Requeue.of(settings))
                .isEqualTo(
                        new StatusReport.Requeue(Duration.ofSeconds(2), Duration.ofSeconds(20), Duration.ofSeconds(4)));
    }
}
