package io.thermocline.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
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
                    List.of(),
                    null,
                    null,
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
}
