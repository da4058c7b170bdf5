package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.archive.ArchiveConnection;
import io.thermocline.operator.archive.ArchivePrivileges;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.backup.BackupOperations;
import io.thermocline.operator.backup.BackupPointSteps;
import io.thermocline.operator.backup.RestoreSteps;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ClusterHealth;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The plan's own decisions, without Quarkus or an API server. */
@Timeout(60)
class ClusterPlanTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");
    private static final RenderedConfig VALID = new RenderedConfig("tiers: {}", null);
    private static final RenderedConfig INVALID = new RenderedConfig(null, "collections[1] repeats shop.orders");
    private static final ClusterHealth.Pausing WAITING =
            new ClusterHealth.Pausing("PausingWaitingForFeeder", "the feeder mirrors the rest");
    /** An archive user with no privilege at all: every action is missing. */
    private static final ArchivePrivileges NONE = new ArchivePrivileges(true, Set.of(), Set.of(), true);

    private static Condition ready(String status, String reason) {
        return new ConditionBuilder()
                .withType("Ready")
                .withStatus(status)
                .withReason(reason)
                .build();
    }

    private static ClusterPlan plan(
            ThermoclineClusterSpec spec, ArchiveSecrets.Access access, RenderedConfig config, String version) {
        return new ClusterPlan(
                LAYOUT,
                spec,
                new ThermoclineClusterStatus(),
                access,
                new ArchiveReport.Reachable("7.0.14", "rs0"),
                new VersionDecision(true, "7.0.14", "MatchesArchive", "ok"),
                config,
                version,
                new ClusterPlan.FastTier(Map.of(), null, true, null, 3),
                new BackupOperations.Plan(
                        new BackupPointSteps.Step(null, false, null),
                        new RestoreSteps.Step(null, null, null, false),
                        null,
                        0),
                "orders-warmer-1a2b",
                null,
                WAITING);
    }

    @Test
    void theWorkflowRunsOnlyWithAValidSpecAndAFastTierVersion() {
        assertThat(ClusterPlan.deploys(VALID, "7.0.14")).isTrue();
        assertThat(ClusterPlan.deploys(INVALID, "7.0.14")).isFalse();
        assertThat(ClusterPlan.deploys(VALID, null)).isFalse();
        assertThat(plan(new ThermoclineClusterSpec(), null, VALID, "7.0.14").deploy())
                .isTrue();
        assertThat(plan(new ThermoclineClusterSpec(), null, INVALID, "7.0.14").deploy())
                .isFalse();
        assertThat(plan(new ThermoclineClusterSpec(), null, VALID, null).deploy())
                .isFalse();
    }

    @Test
    void theFastTierVersionIsTheDecisionsOrWithoutOneTheLastReported() {
        ThermoclineClusterStatus previous = new ThermoclineClusterStatus();
        previous.fastTierVersion = "6.0.19";
        assertThat(ClusterPlan.fastTierVersion(new VersionDecision(true, "7.0.14", "MatchesArchive", "ok"), previous))
                .isEqualTo("7.0.14");
        assertThat(ClusterPlan.fastTierVersion(
                        new VersionDecision(false, null, "IncompatibleArchive", "5.0 is too old"), previous))
                .as("a new cluster against an incompatible archive gets nothing")
                .isNull();
        assertThat(ClusterPlan.fastTierVersion(null, previous))
                .as("an unreachable archive keeps the last version")
                .isEqualTo("6.0.19");
        assertThat(ClusterPlan.fastTierVersion(null, new ThermoclineClusterStatus()))
                .isNull();
    }

    @Test
    void theUserDirectoryIsNotAskedOfTheArchiveWhenSpecAuthDoesNotUseIt() {
        ArchiveReport probed = new ArchiveReport.Reachable("7.0.14", "rs0", NONE);
        ThermoclineClusterSpec usesArchive = new ThermoclineClusterSpec();
        assertThat(((ArchiveReport.Reachable) ClusterPlan.asUsed(probed, usesArchive))
                        .privileges()
                        .missing())
                .anySatisfy(m -> assertThat(m).startsWith("viewUser, viewRole"));

        ThermoclineClusterSpec fileOnly = new ThermoclineClusterSpec();
        fileOnly.auth.users = List.of("file");
        ArchiveReport used = ClusterPlan.asUsed(probed, fileOnly);
        assertThat(used).isInstanceOf(ArchiveReport.Reachable.class);
        ArchiveReport.Reachable reachable = (ArchiveReport.Reachable) used;
        assertThat(reachable.version()).isEqualTo("7.0.14");
        assertThat(reachable.replicaSetName()).isEqualTo("rs0");
        assertThat(reachable.privileges().missing())
                .as("the data privileges are still asked")
                .isNotEmpty()
                .noneSatisfy(m -> assertThat(m).contains("viewUser"));

        ArchiveReport unusable = new ArchiveReport.Unusable("SecretMissing", "no Secret archive");
        assertThat(ClusterPlan.asUsed(unusable, fileOnly)).isSameAs(unusable);
    }

    @Test
    void aPauseStepNeedsItsOwnEventOnlyAfterAnotherFalseReady() {
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(WAITING, List.of(ready("False", "PausingStoppingWrites"))))
                .isTrue();
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(WAITING, List.of(ready("False", "PausingWaitingForFeeder"))))
                .as("already reported")
                .isFalse();
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(WAITING, List.of(ready("True", "AllComponentsReady"))))
                .as("Ready turning False is its own transition's Event")
                .isFalse();
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(WAITING, null)).isFalse();
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(WAITING, List.of())).isFalse();
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(null, List.of(ready("False", "PausingStoppingWrites"))))
                .isFalse();
        Condition otherType = new ConditionBuilder()
                .withType("ProxyReady")
                .withStatus("False")
                .withReason("NotReady")
                .build();
        assertThat(ClusterPlan.pauseNeedsItsOwnEvent(WAITING, List.of(otherType)))
                .isFalse();
    }

    @Test
    void theFeederStopsOnlyOnceAPauseDrainedIt() {
        ThermoclineClusterSpec paused = new ThermoclineClusterSpec();
        paused.paused = true;
        assertThat(plan(paused, null, VALID, "7.0.14").feederStopped())
                .as("still draining")
                .isFalse();
        ClusterPlan drained = plan(paused, null, VALID, "7.0.14");
        drained = new ClusterPlan(
                drained.layout(),
                drained.spec(),
                drained.previous(),
                drained.access(),
                drained.archive(),
                drained.version(),
                drained.config(),
                drained.fastTierVersion(),
                drained.fastTier(),
                drained.operations(),
                drained.warmerJob(),
                drained.feeder(),
                null);
        assertThat(drained.feederStopped()).isTrue();
        assertThat(plan(new ThermoclineClusterSpec(), null, VALID, "7.0.14").feederStopped())
                .isFalse();
    }

    @Test
    void theArchiveUriIsTheSecretsAndTheKeyNamesTheCluster() {
        ArchiveSecrets.Access found = new ArchiveSecrets.Found(new ArchiveConnection("mongodb://a:27017/", null));
        assertThat(plan(new ThermoclineClusterSpec(), found, VALID, "7.0.14").archiveUri())
                .isEqualTo("mongodb://a:27017/");
        ArchiveSecrets.Access missing =
                new ArchiveSecrets.Missing(new ArchiveReport.Unusable("SecretMissing", "no Secret archive"));
        assertThat(plan(new ThermoclineClusterSpec(), missing, VALID, "7.0.14").archiveUri())
                .isNull();
        assertThat(ClusterPlan.key(LAYOUT)).isEqualTo("shop/orders");
    }

    @Test
    void theStatusIsToldWhatThePlanDecided() {
        ClusterPlan plan = plan(new ThermoclineClusterSpec(), null, INVALID, "7.0.14");
        StatusReport.Planned planned = plan.planned();
        assertThat(planned.specProblem()).isEqualTo("collections[1] repeats shop.orders");
        assertThat(planned.archive()).isSameAs(plan.archive());
        assertThat(planned.version()).isSameAs(plan.version());
        assertThat(planned.fastTierVersion()).isEqualTo("7.0.14");
        assertThat(planned.initiatedBefore()).isTrue();
        assertThat(planned.pausing()).isSameAs(WAITING);
        assertThat(planned.operations()).isSameAs(plan.operations());
    }
}
