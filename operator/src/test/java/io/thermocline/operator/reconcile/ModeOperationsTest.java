package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.fakes.ModeController;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.status.ConditionType;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.Set;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * spec.mode as a day-2 operation (issue 16): the operator writes the request into the fast tier's mode
 * document, the data plane's controller ({@link ModeController}, stepping per MODES.md) carries it out,
 * and status, conditions and Events follow each step; deletion drains first, or refuses when it cannot know.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@Timeout(180)
class ModeOperationsTest extends OperatorOnFakes {

    /** Generous: the first cluster of a test run converges slowly on a loaded machine. */
    private static final Duration WAIT = Duration.ofSeconds(45);
    /** Long enough for many reconciles at the test profile's 200 ms mode step. */
    private static final Duration SEVERAL_RECONCILES = Duration.ofSeconds(2);

    ModeOperationsTest() {
        super("m", WAIT);
    }

    @Test
    void aModeChangeWritesTheRequestAndStatusFollowsTheFleet() {
        ModeController fleet = modes.controller(ns, "adopt");
        createReady("adopt", c -> c.getSpec().mode = ClusterMode.SHADOW);
        awaitStored("adopt", c -> {
            assertThat(c.getStatus().mode.active).isEqualTo("shadow");
            assertThat(c.getStatus().mode.phase).isEqualTo("Shadowing");
            assertThat(condition(c, ConditionType.ModeActive).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.ModeActive).getReason()).isEqualTo("Shadowing");
            assertThat(condition(c, ConditionType.Drained).getReason()).isEqualTo("NotDraining");
        });
        assertThat(fleet.requests()).containsExactly(request("shadow", false));

        String config = client.configMaps()
                .inNamespace(ns)
                .withName("adopt-config")
                .get()
                .getData()
                .toString();
        String proxyTemplate =
                get(Deployment.class, "adopt-proxy").getSpec().getTemplate().toString();
        // a controller's own write in between loses the operator its compare-and-set once: it reads again and retries
        fleet.conflictNext(1);
        fleet.shadowEvidence("proxy-0", "shop.orders", 800, 600, 400, 0, null);
        fleet.shadowEvidence("proxy-1", "shop.orders", 200, 150, 100, 0, null);
        edit("adopt", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitStored("adopt", c -> {
            assertThat(c.getStatus().mode.active).isEqualTo("tiered");
            assertThat(c.getStatus().mode.phase).isEqualTo("Tiered");
            assertThat(condition(c, ConditionType.ModeActive).getStatus()).isEqualTo("True");
            assertThat(c.getStatus().mode.shadow.reads).isEqualTo(1000L);
            assertThat(c.getStatus().mode.shadow.wouldServePercent).isEqualTo("75.0");
            assertThat(c.getStatus().mode.shadow.comparisons).isEqualTo(500L);
            assertThat(c.getStatus().mode.shadow.divergences).isZero();
        });
        assertThat(fleet.requests()).containsExactly(request("shadow", false), request("tiered", false));
        assertThat(client.configMaps()
                        .inNamespace(ns)
                        .withName("adopt-config")
                        .get()
                        .getData())
                .as("no config change")
                .hasToString(config);
        assertThat(get(Deployment.class, "adopt-proxy").getSpec().getTemplate())
                .as("no rolling restart")
                .hasToString(proxyTemplate);
        assertThat(fleet.document().getLong("epoch"))
                .as("shadow, cutting over, tiered")
                .isEqualTo(3L);
        assertThat(reasons())
                .containsOnlyOnce("ShadowStarted", "CuttingOver", "CutOver")
                .filteredOn("ModeRequested"::equals)
                .hasSize(2);
    }

    /** Issue 44 item 3: without spec.mode, a cluster over an archive that already holds data takes the safe path. */
    @Test
    void aNewClusterOverAnArchiveHoldingDataStartsInShadowUntilTheSpecSaysOtherwise() {
        ModeController fleet = modes.controller(ns, "safe");
        archive.holding(Set.of("shop.orders"));
        createReady("safe", c -> {});
        awaitStored("safe", c -> {
            assertThat(c.getSpec().mode)
                    .as("the operator never writes the spec")
                    .isNull();
            assertThat(c.getStatus().mode.phase).isEqualTo("Shadowing");
            assertThat(c.getStatus().mode.source).isEqualTo("default");
            assertThat(c.getStatus().mode.defaultReason).contains("shop.orders").contains("spec.mode: tiered");
            assertThat(condition(c, ConditionType.ModeActive).getMessage())
                    .contains("archive already held documents in shop.orders");
        });
        assertThat(fleet.requests()).containsExactly(request("shadow", false));
        assertThat(reasons()).contains("ModeRequested");

        edit("safe", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitStored("safe", c -> {
            assertThat(c.getStatus().mode.phase).isEqualTo("Tiered");
            assertThat(c.getStatus().mode.source).isEqualTo("spec");
            assertThat(c.getStatus().mode.defaultReason).isNull();
        });
        // unset again: the fleet keeps tiered; the reconcile that saw the unset spec is the signal that nothing more is
        // written
        edit("safe", c -> c.getSpec().mode = null);
        awaitStored("safe", c -> {
            assertThat(c.getStatus().mode.source).isEqualTo("default");
            assertThat(c.getStatus().mode.defaultReason)
                    .contains("keeps the mode last requested (tiered, by operator)");
        });
        assertThat(fleet.requests()).containsExactly(request("shadow", false), request("tiered", false));
        assertThat(stored("safe").getStatus().mode.active).isEqualTo("tiered");
    }

    @Test
    void aNewClusterOverAnArchiveWhoseTieredCollectionsAreEmptyStartsTiered() {
        ModeController fleet = modes.controller(ns, "fresh");
        archive.holding(Set.of("other.things"));
        createReady("fresh", c -> {});
        awaitStored("fresh", c -> {
            assertThat(c.getStatus().mode.phase).isEqualTo("Tiered");
            assertThat(c.getStatus().mode.source).isEqualTo("default");
            assertThat(c.getStatus().mode.defaultReason).contains("tiered collections were empty");
        });
        assertThat(fleet.requests()).containsExactly(request("tiered", false));
    }

    @Test
    void anArchiveThatCannotBeAskedMakesANewClusterStartInShadow() {
        ModeController fleet = modes.controller(ns, "unsure");
        archive.holding(null);
        createReady("unsure", c -> {});
        awaitStored("unsure", c -> {
            assertThat(c.getStatus().mode.phase).isEqualTo("Shadowing");
            assertThat(c.getStatus().mode.defaultReason).contains("could not be read");
        });
        assertThat(fleet.requests()).containsExactly(request("shadow", false));
    }

    /** A resource re-created over a kept fast tier: its mode document says what the fleet does, and an unset spec keeps it. */
    @Test
    void aFastTierThatAlreadyHasAModeKeepsItWhenTheSpecNamesNone() {
        ModeController fleet = modes.controller(ns, "kept");
        fleet.requestedBefore("tiered", "cli");
        archive.holding(Set.of("shop.orders"));
        createReady("kept", c -> {});
        awaitStored("kept", c -> {
            assertThat(c.getStatus().mode.active).isEqualTo("tiered");
            assertThat(c.getStatus().mode.requestedBy).isEqualTo("cli");
            assertThat(c.getStatus().mode.source).isEqualTo("default");
            assertThat(condition(c, ConditionType.ModeActive).getStatus()).isEqualTo("True");
        });
        assertThat(fleet.requests()).isEmpty();
    }

    @Test
    void aRefusedCutoverIsReportedOnceAndCutsOverWhenTheEvidenceIsIn() {
        ModeController fleet = modes.controller(ns, "gate");
        createReady("gate", c -> c.getSpec().mode = ClusterMode.SHADOW);
        awaitPhase("gate", "Shadowing");
        String refusal = "shop.orders diverged 2 minutes ago (quiet period 1h)";
        fleet.refuseCutover(refusal);
        fleet.shadowEvidence("proxy-0", "shop.orders", 100, 90, 50, 2, Instant.parse("2026-12-01T12:00:00Z"));
        edit("gate", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitStored("gate", c -> {
            assertThat(condition(c, ConditionType.ModeActive).getStatus()).isEqualTo("False");
            assertThat(condition(c, ConditionType.ModeActive).getReason()).isEqualTo("CutoverRefused");
            assertThat(condition(c, ConditionType.ModeActive).getMessage())
                    .contains(refusal)
                    .contains("spec.modeOverride");
            assertThat(c.getStatus().mode.refusal).isEqualTo(refusal);
            assertThat(c.getStatus().mode.active).isEqualTo("shadow");
            assertThat(c.getStatus().mode.shadow.divergences).isEqualTo(2L);
            assertThat(c.getStatus().mode.shadow.lastDivergence).isEqualTo("2026-12-01T12:00:00Z");
            assertThat(c.getStatus().mode.shadow.lastDivergenceNamespace).isEqualTo("shop.orders");
        });
        await().pollDelay(SEVERAL_RECONCILES).atMost(WAIT).until(() -> true);
        assertThat(reasons())
                .as("one Event per refusal, not per reconcile")
                .containsOnlyOnce("CutoverRefused")
                .doesNotContain("CutOver");

        fleet.refuseCutover(null);
        awaitStored("gate", c -> {
            assertThat(condition(c, ConditionType.ModeActive).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.ModeActive).getReason()).isEqualTo("Tiered");
            assertThat(c.getStatus().mode.refusal).isNull();
        });
        assertThat(reasons()).containsOnlyOnce("CutoverRefused", "CutOver");
    }

    @Test
    void theArchiveFollowerShowsInStatusAndItsConditionSaysWhyACutoverWaits() {
        ModeController fleet = modes.controller(ns, "follow");
        int archiveNow = (int) Instant.now().getEpochSecond();
        fleet.archiveLatest(new BsonTimestamp(archiveNow, 4));
        createReady("follow", c -> c.getSpec().mode = ClusterMode.SHADOW);
        // shadowing, but no feeder process has taken the follower's lease
        awaitStored("follow", c -> {
            assertThat(c.getStatus().mode.phase).isEqualTo("Shadowing");
            assertThat(c.getStatus().mode.follower.running).isFalse();
            assertThat(condition(c, ConditionType.FollowerHealthy).getStatus()).isEqualTo("False");
            assertThat(condition(c, ConditionType.FollowerHealthy).getReason()).isEqualTo("FollowerStopped");
            assertThat(condition(c, ConditionType.FollowerHealthy).getMessage())
                    .contains("follow-feeder Deployment")
                    .contains("holds a cutover to tiered back");
        });

        Instant lease = Instant.now().plus(Duration.ofHours(1));
        fleet.follower(follower("follow-feeder-5d8f-x2", 2, lease, archiveNow - 3, null));
        awaitStored("follow", c -> {
            assertThat(c.getStatus().mode.follower.running).isTrue();
            assertThat(c.getStatus().mode.follower.holder).isEqualTo("follow-feeder-5d8f-x2");
            assertThat(c.getStatus().mode.follower.term).isEqualTo(2L);
            assertThat(c.getStatus().mode.follower.lagSeconds).isEqualTo(3L);
            assertThat(c.getStatus().mode.follower.appliedThrough)
                    .isEqualTo(Instant.ofEpochSecond(archiveNow - 3).toString());
            assertThat(condition(c, ConditionType.FollowerHealthy).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.FollowerHealthy).getReason()).isEqualTo("InStep");
        });

        // the archive's oplog lost the resume point: a resync runs, with its progress
        Instant started = Instant.now().minusSeconds(120).truncatedTo(ChronoUnit.SECONDS);
        fleet.follower(follower(
                "follow-feeder-5d8f-x2",
                2,
                lease,
                archiveNow - 3,
                new Document("count", 1L)
                        .append("startedAt", Date.from(started))
                        .append("finishedAt", null)
                        .append("reason", "archive change stream history lost (code 286)")
                        .append("copied", 800L)
                        .append("deleted", 2L)));
        awaitStored("follow", c -> {
            assertThat(c.getStatus().mode.follower.resync.running).isTrue();
            assertThat(c.getStatus().mode.follower.resync.startedAt).isEqualTo(started.toString());
            assertThat(c.getStatus().mode.follower.resync.copied).isEqualTo(800L);
            assertThat(condition(c, ConditionType.FollowerHealthy).getReason()).isEqualTo("FollowerResyncing");
            assertThat(condition(c, ConditionType.FollowerHealthy).getMessage())
                    .contains("800 document(s) copied and 2 deleted");
        });

        // it finished, and then fell behind the bound (spec.feeder.maxFollowerLagSeconds, 60 by default)
        fleet.follower(follower(
                "follow-feeder-5d8f-x2",
                2,
                lease,
                archiveNow - 90,
                new Document("count", 1L)
                        .append("startedAt", Date.from(started))
                        .append("finishedAt", Date.from(started.plusSeconds(60)))
                        .append("reason", "archive change stream history lost (code 286)")
                        .append("copied", 900L)
                        .append("deleted", 2L)));
        awaitStored("follow", c -> {
            assertThat(c.getStatus().mode.follower.resync.running).isFalse();
            assertThat(c.getStatus().mode.follower.lagSeconds).isEqualTo(90L);
            assertThat(condition(c, ConditionType.FollowerHealthy).getReason()).isEqualTo("FollowerBehind");
            assertThat(condition(c, ConditionType.FollowerHealthy).getMessage()).contains("90 s behind");
        });
        // an Event per change of the condition's status, as for the other conditions (Resyncing to Behind stays False)
        assertThat(reasons()).containsOnlyOnce("FollowerStopped", "InStep", "FollowerResyncing");

        // tiered: the follower does not run, and is not reported
        fleet.follower(follower("follow-feeder-5d8f-x2", 2, lease, archiveNow, null));
        edit("follow", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitStored("follow", c -> {
            assertThat(c.getStatus().mode.phase).isEqualTo("Tiered");
            assertThat(c.getStatus().mode.follower).isNull();
            assertThat(condition(c, ConditionType.FollowerHealthy)).isNull();
        });
    }

    @Test
    void anOverrideCutsOverWithoutTheEvidence() {
        ModeController fleet = modes.controller(ns, "force");
        createReady("force", c -> c.getSpec().mode = ClusterMode.SHADOW);
        awaitPhase("force", "Shadowing");
        fleet.refuseCutover("shop.orders has 12 of the 1000 comparisons needed");
        edit("force", c -> {
            c.getSpec().mode = ClusterMode.TIERED;
            c.getSpec().modeOverride = true;
        });
        awaitPhase("force", "Tiered");
        assertThat(fleet.requests()).last().isEqualTo(request("tiered", true));
        assertThat(stored("force").getStatus().mode.override).isTrue();
        assertThat(reasons()).doesNotContain("CutoverRefused").containsOnlyOnce("CutOver");
    }

    @Test
    void drainingShowsProgressThenDrained() {
        ModeController fleet = modes.controller(ns, "back");
        fleet.holdDrain(true);
        createReady("back", c -> {});
        awaitPhase("back", "Tiered");
        edit("back", c -> c.getSpec().mode = ClusterMode.DRAINING);
        awaitStored("back", c -> {
            assertThat(c.getStatus().mode.phase).isEqualTo("Draining");
            assertThat(condition(c, ConditionType.ModeActive).getReason()).isEqualTo("Draining");
            assertThat(condition(c, ConditionType.Drained).getStatus()).isEqualTo("False");
            assertThat(condition(c, ConditionType.Drained).getMessage())
                    .contains("4.5 s behind")
                    .contains("12 write(s)");
            assertThat(c.getStatus().mode.drain.unmirroredEvents).isEqualTo(12L);
        });
        assertThat(reasons()).containsOnlyOnce("DrainStarted").doesNotContain("Drained");

        fleet.holdDrain(false);
        awaitStored("back", c -> {
            assertThat(condition(c, ConditionType.Drained).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.Drained).getMessage())
                    .contains("applications may connect to it again");
            assertThat(condition(c, ConditionType.ModeActive).getStatus()).isEqualTo("True");
            assertThat(c.getStatus().mode.drain.drainedAt).isNotNull();
        });
        assertThat(reasons()).containsOnlyOnce("DrainStarted", "Drained");
    }

    @Test
    void deletionDrainsFirstWhileApplicationsStillConnectThenDeletes() {
        ModeController fleet = modes.controller(ns, "remove");
        createReady("remove", c -> {});
        awaitPhase("remove", "Tiered");
        fleet.holdDrain(true);

        delete("remove");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(fleet.requests()).last().isEqualTo(request("draining", false));
            ThermoclineCluster c = stored("remove");
            assertThat(c.getStatus().mode.phase).isEqualTo("Draining");
            assertThat(condition(c, ConditionType.Drained).getReason()).isEqualTo("Draining");
            assertThat(reasons()).contains("DeletionDraining", "DrainStarted");
        });
        await().pollDelay(SEVERAL_RECONCILES).atMost(WAIT).until(() -> true);
        assertThat(stored("remove")).as("held until Drained").isNotNull();
        assertThat(get(Deployment.class, "remove-proxy").getSpec().getReplicas())
                .as("the proxy serves from the archive while draining")
                .isEqualTo(2);

        fleet.holdDrain(false);
        await().atMost(WAIT).until(() -> stored("remove") == null);
        // then writes stopped, as before, and the proxy (no owner reference: out of the garbage collector's reach)
        // deleted
        assertThat(get(Deployment.class, "remove-proxy"))
                .as("deleted by the operator after the drain")
                .isNull();
        assertThat(reasons()).containsOnlyOnce("DeletionDraining", "Drained").doesNotContain("DeletionDrainTimedOut");
    }

    @Test
    void deletionRefusesWhileTheFastTierCannotBeRead() {
        ModeController fleet = modes.controller(ns, "dark");
        createReady("dark", c -> {});
        awaitPhase("dark", "Tiered");
        fleet.reachable(false);

        delete("dark");
        awaitStored("dark", c -> {
            assertThat(condition(c, ConditionType.Drained).getReason()).isEqualTo("DeletionRefused");
            assertThat(condition(c, ConditionType.Drained).getMessage())
                    .contains("cannot be reached")
                    .contains(ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION);
            assertThat(reasons()).contains("DeletionRefused");
        });
        // past the drain bound (6 s in tests): an unknown fast tier is never given up on
        await().pollDelay(Duration.ofSeconds(8)).atMost(WAIT).until(() -> true);
        assertThat(stored("dark")).isNotNull();
        assertThat(get(Deployment.class, "dark-proxy").getSpec().getReplicas()).isEqualTo(2);
        assertThat(fleet.requests()).doesNotContain(request("draining", false));
        assertThat(reasons()).containsOnlyOnce("DeletionRefused");

        fleet.reachable(true);
        await().atMost(WAIT).until(() -> stored("dark") == null);
        assertThat(fleet.requests()).last().isEqualTo(request("draining", false));
    }

    @Test
    void aDrainThatDoesNotFinishInTimeFallsBackToStoppingWrites() {
        ModeController fleet = modes.controller(ns, "slow");
        createReady("slow", c -> {});
        awaitPhase("slow", "Tiered");
        fleet.holdDrain(true);
        delete("slow");
        await().atMost(WAIT).until(() -> reasons().contains("DeletionDraining"));
        assertThat(get(Deployment.class, "slow-proxy").getSpec().getReplicas()).isEqualTo(2);
        // the feeder has not mirrored everything: deletion still waits for it after the bound
        tiering.report(new io.thermocline.operator.tiering.TieringSnapshot(30L, false, 10L, 5L));
        await().atMost(WAIT).until(() -> reasons().contains("DeletionDrainTimedOut"));
        await().atMost(WAIT)
                .until(() -> get(Deployment.class, "slow-proxy").getSpec().getReplicas() == 0);
        await().pollDelay(SEVERAL_RECONCILES).atMost(WAIT).until(() -> true);
        assertThat(stored("slow")).as("the feeder check still holds").isNotNull();
        tiering.report(new io.thermocline.operator.tiering.TieringSnapshot(0L, true, 10L, 10L));
        await().atMost(WAIT).until(() -> stored("slow") == null);
    }

    /** The follower's document as the data plane writes it: lease, progress, last resync. */
    private static Document follower(
            String owner, long term, Instant leaseExpiresAt, int appliedSeconds, Document resync) {
        Document d = new Document("_id", "archiveFollower")
                .append("appliedThrough", new BsonTimestamp(appliedSeconds, 1))
                .append(
                        "lease",
                        new Document("owner", owner)
                                .append("term", term)
                                .append("expiresAt", Date.from(leaseExpiresAt)));
        return resync == null ? d : d.append("resync", resync);
    }

    private static Document request(String mode, boolean override) {
        return new Document("requested", mode).append("override", override).append("requestedBy", "operator");
    }

    private void awaitPhase(String name, String phase) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(stored(name).getStatus().mode.phase).isEqualTo(phase));
    }

    private void delete(String name) {
        await().atMost(WAIT)
                .until(() -> stored(name).getMetadata().getFinalizers() != null
                        && !stored(name).getMetadata().getFinalizers().isEmpty());
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName(name)
                .delete();
    }
}
