package io.thermocline.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.thermocline.operator.archive.ArchivePrivileges;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.status.ClusterHealth.Health;
import io.thermocline.operator.status.ClusterHealth.Inputs;
import io.thermocline.operator.status.ClusterHealth.Replicas;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterHealthTest {

    private static final ArchiveReport REACHABLE = new ArchiveReport.Reachable("7.0.14", "rs0");
    private static final VersionDecision MATCHES = new VersionDecision(true, "7.0.14", "MatchesArchive", "ok");
    private static final ReplicaSetState CONVERGED = new ReplicaSetState.Converged(List.of("a", "b", "c"), "7.0");

    /**
     * The inputs of a ready cluster (3/3 members, converged, proxies and feeder ready, feeder lag 1 s of 300),
     * which a test changes field by field before it evaluates them.
     */
    private static final class Given {
        boolean paused;
        String specProblem;
        ArchiveReport archive = REACHABLE;
        VersionDecision version = MATCHES;
        Replicas fastTier = new Replicas(3, 3);
        ReplicaSetState replicaSet = CONVERGED;
        Replicas proxy = new Replicas(2, 2);
        Replicas feeder = new Replicas(1, 1);
        TieringSnapshot tiering = new TieringSnapshot(1L, true, 1L, 1L);
        String previousPhase;
        Observed lastFeederObservation;
        List<String> rejected = List.of();
        ClusterHealth.Pausing pausing;
        ClusterHealth.Warmer warmer;

        /** ... that were Ready at the last reconcile. */
        Given wasReady() {
            previousPhase = "Ready";
            return this;
        }

        Health evaluate() {
            return ClusterHealth.evaluate(new Inputs(
                    paused,
                    specProblem,
                    archive,
                    version,
                    fastTier,
                    replicaSet,
                    proxy,
                    feeder,
                    tiering,
                    300,
                    previousPhase,
                    rejected,
                    pausing,
                    warmer,
                    lastFeederObservation));
        }
    }

    private static Observed condition(Health health, ConditionType type) {
        return health.conditions().stream()
                .filter(c -> c.type() == type)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void everythingReadyIsReady() {
        Health health = new Given().evaluate();
        assertThat(health.phase()).isEqualTo("Ready");
        assertThat(health.ready()).isTrue();
        // Warmed is reported once a warmer Job exists (not an input here); ModeActive, Drained and FollowerHealthy by
        // the
        // mode package; CertificatesReady by the fast tier's TLS step, only while it has or is to get TLS;
        // BackupPointReached
        // and Restoring by the backup package, once spec.backupPoint or spec.restore asked
        assertThat(health.conditions())
                .extracting(Observed::type)
                .containsExactly(java.util.Arrays.stream(ConditionType.values())
                        .filter(t -> t != ConditionType.Warmed
                                && t != ConditionType.ModeActive
                                && t != ConditionType.Drained
                                && t != ConditionType.FollowerHealthy
                                && t != ConditionType.CertificatesReady
                                && t != ConditionType.BackupPointReached
                                && t != ConditionType.Restoring)
                        .toArray(ConditionType[]::new));
        assertThat(health.conditions()).allMatch(Observed::holds);
    }

    @Test
    void aReadyClusterLosingAMemberIsDegraded() {
        Given given = new Given().wasReady();
        given.fastTier = new Replicas(3, 2);
        Health health = given.evaluate();
        assertThat(health.phase()).isEqualTo("Degraded");
        assertThat(condition(health, ConditionType.FastTierReady).reason()).isEqualTo("MembersNotReady");
        assertThat(condition(health, ConditionType.FastTierReady).message()).startsWith("2/3");
    }

    @Test
    void pauseWinsOverComponentState() {
        Given given = new Given().wasReady();
        given.paused = true;
        given.proxy = new Replicas(2, 0);
        given.feeder = new Replicas(1, 0);
        given.tiering = null;
        Health health = given.evaluate();
        assertThat(health.phase()).isEqualTo("Paused");
        assertThat(condition(health, ConditionType.Ready).reason()).isEqualTo("Paused");
        assertThat(condition(health, ConditionType.FeederHealthy).reason()).isEqualTo("Paused");
        assertThat(condition(health, ConditionType.FastTierReady).holds()).isTrue();
    }

    @Test
    void invalidSpecFailsAndNamesTheProblem() {
        Given given = new Given();
        given.specProblem = "collections[1]: duplicate";
        given.fastTier = null;
        given.replicaSet = null;
        given.proxy = null;
        given.feeder = null;
        given.tiering = null;
        Health health = given.evaluate();
        assertThat(health.phase()).isEqualTo("Failed");
        assertThat(condition(health, ConditionType.Ready).reason()).isEqualTo("InvalidSpec");
        assertThat(condition(health, ConditionType.Ready).message()).contains("collections[1]");
        assertThat(condition(health, ConditionType.FastTierReady).reason()).isEqualTo("NotCreated");
    }

    @Test
    void feederLagAboveTheLimitIsUnhealthy() {
        Given given = new Given().wasReady();
        given.tiering = new TieringSnapshot(301L, false, 1L, 1L);
        Health health = given.evaluate();
        assertThat(condition(health, ConditionType.FeederHealthy).reason()).isEqualTo("LagTooHigh");
        assertThat(health.phase()).isEqualTo("Degraded");
    }

    @Test
    void deadLettersMakeTheFeederUnhealthyAndSayWhatToDo() {
        var alerts = new TieringSnapshot.FeederAlerts(
                2, "shop.orders _id 7: upsert failed with code 11000 (E11000 duplicate key)", null, false);
        Given given = new Given().wasReady();
        given.tiering = new TieringSnapshot(0L, true, 1L, 1L, List.of(), alerts);
        Health health = given.evaluate();
        Observed feeder = condition(health, ConditionType.FeederHealthy);
        assertThat(feeder.holds()).isFalse();
        assertThat(feeder.reason()).isEqualTo("DeadLetters");
        assertThat(feeder.message())
                .contains("2 mirror write(s)", "_id 7", "11000", "deadLetters.find()", "fix the cause");
    }

    /**
     * Issue 40: an archive outage the feeder reports (its shared state's {@code archiveUnavailable}) is named as the cause,
     * with why, since when and the driver's error, before its lag passes the limit; before, FeederHealthy stayed Mirroring
     * and then said LagTooHigh with "check the archive's write capacity".
     */
    @Test
    void anArchiveOutageTheFeederReportsIsNamedAsTheCause() {
        java.time.Instant since = java.time.Instant.parse("2026-12-07T21:00:00Z");
        for (String why : List.of("unreachable", "stalled")) {
            var alerts = new TieringSnapshot.FeederAlerts(
                    0,
                    null,
                    null,
                    false,
                    new TieringSnapshot.ArchiveOutage(why, since, "Timeout while receiving message"));
            Given given = new Given().wasReady();
            given.tiering = new TieringSnapshot(4L, false, 3L, null, null, alerts);
            Observed feeder = condition(given.evaluate(), ConditionType.FeederHealthy);
            assertThat(feeder.holds()).as(why).isFalse();
            assertThat(feeder.reason()).as(why).isEqualTo("ArchiveUnavailable");
            assertThat(feeder.message())
                    .as(why)
                    .contains(
                            "archive outage: the archive is " + why,
                            since.toString(),
                            "Timeout while receiving message",
                            "nothing is lost",
                            "docs/faults.md");
        }
        var refusing = new TieringSnapshot.FeederAlerts(
                0, null, null, false, new TieringSnapshot.ArchiveOutage("refusing_writes", since, "OutOfDiskSpace"));
        Given given = new Given().wasReady();
        given.tiering = new TieringSnapshot(400L, false, 3L, 3L, List.of(), refusing);
        Observed feeder = condition(given.evaluate(), ConditionType.FeederHealthy);
        assertThat(feeder.reason()).as("the cause, not the lag it causes").isEqualTo("ArchiveUnavailable");
        assertThat(feeder.message()).contains("refuses the feeder's writes", "OutOfDiskSpace", "free space");
        assertThat(ClusterHealth.lastFeederObservation(List.of(new ConditionBuilder()
                        .withType(ConditionType.FeederHealthy.name())
                        .withStatus("False")
                        .withReason("ArchiveUnavailable")
                        .withMessage("archive outage")
                        .build())))
                .as("it stands while the fast tier's metadata cannot be read")
                .isEqualTo(Observed.isFalse(ConditionType.FeederHealthy, "ArchiveUnavailable", "archive outage"));
    }

    @Test
    void aResyncAfterLostHistoryIsReportedWhileItRuns() {
        var alerts = new TieringSnapshot.FeederAlerts(0, null, java.time.Instant.parse("2026-01-01T00:00:00Z"), true);
        Given given = new Given().wasReady();
        given.tiering = new TieringSnapshot(0L, false, 1L, 1L, List.of(), alerts);
        Health health = given.evaluate();
        assertThat(condition(health, ConditionType.FeederHealthy).reason()).isEqualTo("ChangeStreamHistoryLost");
        assertThat(condition(health, ConditionType.FeederHealthy).message()).contains("resyncing", "oplog");
    }

    @Test
    void replicaSetStillConvergingKeepsFastTierNotReady() {
        Given given = new Given();
        given.replicaSet = new ReplicaSetState.Converging("AddingMember", "adding x");
        given.tiering = null;
        Health health = given.evaluate();
        assertThat(condition(health, ConditionType.FastTierReady).reason()).isEqualTo("AddingMember");
        assertThat(health.phase()).isEqualTo("Progressing");
    }

    @Test
    void unreachableArchiveOfARunningClusterIsDegraded() {
        Given given = new Given().wasReady();
        given.archive = new ArchiveReport.Unusable("NoPrimary", "no primary");
        given.version = null;
        given.tiering = null;
        Health health = given.evaluate();
        assertThat(health.phase()).isEqualTo("Degraded");
        assertThat(condition(health, ConditionType.VersionCompatible).status()).isEqualTo(Observed.Status.Unknown);
        assertThat(condition(health, ConditionType.Ready).reason()).isEqualTo("ArchiveNotReachable");
    }

    /** While the feeder's progress cannot be read (a roll, an operator restart), its last reading stands, never "Mirroring". */
    @Test
    void anUnreadFeederProgressKeepsTheLastObservationOrIsUnknown() {
        Observed deadLetters =
                Observed.isFalse(ConditionType.FeederHealthy, "DeadLetters", "3 mirror write(s) refused");
        Given unread = new Given().wasReady();
        unread.tiering = null;
        unread.lastFeederObservation = deadLetters;
        Health kept = unread.evaluate();
        assertThat(condition(kept, ConditionType.FeederHealthy)).isEqualTo(deadLetters);
        assertThat(kept.ready()).isFalse();

        Given neverRead = new Given();
        neverRead.tiering = null;
        Health never = neverRead.evaluate();
        assertThat(condition(never, ConditionType.FeederHealthy).status()).isEqualTo(Observed.Status.Unknown);
        assertThat(condition(never, ConditionType.FeederHealthy).reason()).isEqualTo("NotObserved");
        assertThat(never.ready()).isFalse();

        // the Deployment's own state comes first: a feeder without ready pods is not "dead letters as before"
        unread.feeder = new Replicas(1, 0);
        Health down = unread.evaluate();
        assertThat(condition(down, ConditionType.FeederHealthy).reason()).isEqualTo("ReplicasNotReady");
    }

    @Test
    void onlyAFeederHealthReadFromTheProgressIsALastObservation() {
        assertThat(ClusterHealth.lastFeederObservation(null)).isNull();
        assertThat(ClusterHealth.lastFeederObservation(List.of(new ConditionBuilder()
                        .withType("FeederHealthy")
                        .withStatus("False")
                        .withReason("ReplicasNotReady")
                        .withMessage("0/1")
                        .build())))
                .isNull();
        assertThat(ClusterHealth.lastFeederObservation(List.of(new ConditionBuilder()
                        .withType("FeederHealthy")
                        .withStatus("False")
                        .withReason("LagTooHigh")
                        .withMessage("lag")
                        .build())))
                .isEqualTo(Observed.isFalse(ConditionType.FeederHealthy, "LagTooHigh", "lag"));
    }

    @Test
    void aRefusedObjectDegradesTheClusterAndOnlyVolumeResizesAloneReadAsSuch() {
        Given refused = new Given().wasReady();
        refused.rejected = List.of("fast-tier: StatefulSet.apps is invalid: spec: Forbidden");
        Health health = refused.evaluate();
        Observed applied = condition(health, ConditionType.ResourcesApplied);
        assertThat(applied.reason()).isEqualTo("ApiRejected");
        assertThat(applied.message()).contains("fast-tier: StatefulSet.apps is invalid", "the rest is still managed");
        assertThat(condition(health, ConditionType.Ready))
                .isEqualTo(Observed.isFalse(ConditionType.Ready, "ApiRejected", applied.message()));
        assertThat(health.phase()).isEqualTo("Degraded");

        Given resize = new Given();
        resize.rejected = List.of("fast-tier volumes: data-c-fast-0 cannot grow (the storage class does not allow it)");
        assertThat(condition(resize.evaluate(), ConditionType.ResourcesApplied).reason())
                .isEqualTo("VolumesNotResized");
        resize.rejected = List.of(
                "fast-tier volumes: data-c-fast-0 cannot grow", "proxy: Deployment.apps is invalid: spec.selector");
        assertThat(condition(resize.evaluate(), ConditionType.ResourcesApplied).reason())
                .isEqualTo("ApiRejected");
    }

    /** Before the fast tier exists an unreachable archive is a cluster waiting to start; a user lacking privileges is not. */
    @Test
    void anUnreachableArchiveBeforeTheFastTierIsPendingAndMissingPrivilegesDegraded() {
        Given fresh = new Given();
        fresh.archive = new ArchiveReport.Unusable("SecretNotFound", "create the archive Secret");
        fresh.version = null;
        fresh.fastTier = null;
        fresh.replicaSet = null;
        fresh.proxy = null;
        fresh.feeder = null;
        fresh.tiering = null;
        Health pending = fresh.evaluate();
        assertThat(pending.phase()).isEqualTo("Pending");
        assertThat(condition(pending, ConditionType.Ready).reason()).isEqualTo("ArchiveNotReachable");

        fresh.archive = new ArchiveReport.Reachable(
                "7.0.14", "rs0", new ArchivePrivileges(true, java.util.Set.of("find"), java.util.Set.of(), false));
        fresh.version = MATCHES;
        Health lacking = fresh.evaluate();
        assertThat(condition(lacking, ConditionType.ArchiveReachable).reason()).isEqualTo("MissingPrivileges");
        assertThat(condition(lacking, ConditionType.Ready).reason()).isEqualTo("ArchivePrivilegesMissing");
        assertThat(condition(lacking, ConditionType.Ready).message()).contains("readWriteAnyDatabase");
        assertThat(lacking.phase()).isEqualTo("Degraded");
    }

    /** An incompatible version fails a cluster that was never created, and degrades one that runs (its data is there). */
    @Test
    void anIncompatibleVersionFailsANewClusterAndDegradesARunningOne() {
        Given running = new Given();
        running.version = new VersionDecision(false, "7.0.14", "DowngradeRefused", "the data's FCV is 8.0");
        Health degraded = running.evaluate();
        assertThat(condition(degraded, ConditionType.VersionCompatible).holds()).isFalse();
        assertThat(condition(degraded, ConditionType.Ready))
                .isEqualTo(Observed.isFalse(ConditionType.Ready, "VersionIncompatible", "the data's FCV is 8.0"));
        assertThat(degraded.phase()).isEqualTo("Degraded");

        running.fastTier = null;
        running.replicaSet = null;
        assertThat(running.evaluate().phase()).isEqualTo("Failed");
    }

    /** A pause under way names its step and keeps the feeder evaluated (it runs until the archive holds every write). */
    @Test
    void aPauseUnderWayNamesItsStepAndKeepsTheFeederRunning() {
        Given pausing = new Given().wasReady();
        pausing.paused = true;
        pausing.proxy = new Replicas(0, 0);
        pausing.tiering = new TieringSnapshot(40L, false, 1L, 1L);
        pausing.pausing = new ClusterHealth.Pausing("PausingWaitingForFeeder", "pausing: writes are stopped");
        Health health = pausing.evaluate();
        assertThat(condition(health, ConditionType.Ready))
                .isEqualTo(Observed.isFalse(
                        ConditionType.Ready, "PausingWaitingForFeeder", "pausing: writes are stopped"));
        assertThat(health.phase()).isEqualTo("Progressing");
        assertThat(condition(health, ConditionType.ProxyReady).reason()).isEqualTo("Paused");
        assertThat(condition(health, ConditionType.FeederHealthy).holds()).isTrue();
    }

    @Test
    void eachReplicaSetStepIsTheFastTiersReason() {
        Given restarting = new Given();
        restarting.replicaSet =
                new ReplicaSetState.RestartMember("c-fast-2", "RestartingMember", "restarting c-fast-2", List.of());
        assertThat(condition(restarting.evaluate(), ConditionType.FastTierReady))
                .isEqualTo(Observed.isFalse(ConditionType.FastTierReady, "RestartingMember", "restarting c-fast-2"));

        Given unconfigured = new Given();
        unconfigured.replicaSet = null;
        assertThat(condition(unconfigured.evaluate(), ConditionType.FastTierReady)
                        .reason())
                .isEqualTo("ReplicaSetPending");
        unconfigured.fastTier = new Replicas(3, 1);
        assertThat(condition(unconfigured.evaluate(), ConditionType.FastTierReady)
                        .message())
                .startsWith("1/3 fast-tier members ready");
    }

    /** What a not-ready proxy pod says is wrong reaches the proxy's condition and Ready, and is not lent to the feeder. */
    @Test
    void aNotReadyProxysOwnCauseIsInItsConditionAndInReady() {
        Given given = new Given().wasReady();
        given.proxy = new Replicas(2, 1).withNotReadyCause("the fast tier has no primary");
        given.feeder = new Replicas(1, 0);
        Health health = given.evaluate();
        assertThat(condition(health, ConditionType.ProxyReady).message())
                .isEqualTo("1/2 proxy replicas ready; the fast tier has no primary");
        assertThat(condition(health, ConditionType.FeederHealthy).message())
                .isEqualTo("0/1 feeder replicas ready; see the pods' events and logs");
        assertThat(condition(health, ConditionType.Ready).message())
                .isEqualTo("waiting for ProxyReady (ReplicasNotReady: the fast tier has no primary),"
                        + " FeederHealthy (ReplicasNotReady)");
        assertThat(health.phase()).isEqualTo("Degraded");
    }

    @Test
    void aLagAtTheLimitIsStillMirroring() {
        Given given = new Given();
        given.tiering = new TieringSnapshot(300L, false, 1L, 1L);
        assertThat(condition(given.evaluate(), ConditionType.FeederHealthy).reason())
                .isEqualTo("Mirroring");
    }

    @Test
    void theWarmerJobsOutcomeIsReported() {
        Given given = new Given();
        given.warmer = new ClusterHealth.Warmer("c-warmer-1", null, null);
        assertThat(condition(given.evaluate(), ConditionType.Warmed))
                .isEqualTo(Observed.unknown(
                        ConditionType.Warmed, "Warming", "warmer Job c-warmer-1 is copying what the windows cover"));
        given.warmer = new ClusterHealth.Warmer("c-warmer-1", true, null);
        assertThat(condition(given.evaluate(), ConditionType.Warmed).status()).isEqualTo(Observed.Status.True);
        given.warmer = new ClusterHealth.Warmer("c-warmer-1", false, "BackoffLimitExceeded");
        Observed failed = condition(given.evaluate(), ConditionType.Warmed);
        assertThat(failed.reason()).isEqualTo("WarmerFailed");
        assertThat(failed.status()).isEqualTo(Observed.Status.False);
        assertThat(failed.message()).contains("BackoffLimitExceeded", "kubectl delete job c-warmer-1");
        given.warmer = new ClusterHealth.Warmer("c-warmer-1", null, null);
        given.paused = true;
        assertThat(condition(given.evaluate(), ConditionType.Warmed))
                .isEqualTo(Observed.unknown(
                        ConditionType.Warmed,
                        "Paused",
                        "warmer Job c-warmer-1 is suspended while spec.paused is true"));
        // a warmer's outcome never holds Ready back
        given.paused = false;
        given.warmer = new ClusterHealth.Warmer("c-warmer-1", false, "BackoffLimitExceeded");
        assertThat(given.evaluate().ready()).isTrue();
    }
}
