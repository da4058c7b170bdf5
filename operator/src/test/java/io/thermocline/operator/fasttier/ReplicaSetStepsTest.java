package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.credentials.DataPlanePart;
import io.thermocline.operator.credentials.FastTierUser;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.fakes.ReplicaSetModel;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The real replica-set steps against a member-state model, with the reconciler's own
 * StatefulSet sizing ({@link FastTierPods#replicas}) and rolling restarts in the loop: what
 * MongoDB and the StatefulSet controller would do between two reconciles, the model does.
 */
@Timeout(10)
class ReplicaSetStepsTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("c", "ns");
    private final ReplicaSetModel model = new ReplicaSetModel().podsDrivenByTest();
    private final ReplicaSetSteps steps = new ReplicaSetSteps(model);
    private final Map<String, String> podTemplate = new HashMap<>();
    private final List<String> reasons = new ArrayList<>();
    private int statefulSetReplicas;
    /** spec.fastTier.featureCompatibilityVersion as the reconciler resolves it: null leaves the FCV where it is. */
    private String wantedFcv;

    private boolean initiated;
    private List<FastTierUser> users =
            List.of(new FastTierUser("tc", "tcpw", "c-users", List.of("readWrite@thermocline"), List.of(), List.of()));

    @Test
    void initiatesOnceThenAddsMembersOneAtATime() {
        converge(3, "7.0.14");
        assertThat(reasons).startsWith("Initiating", "AddingMember");
        assertThat(model.commands())
                .containsExactly(
                        "initiate " + host(0),
                        "reconfig " + List.of(host(0), host(1)),
                        "reconfig " + List.of(host(0), host(1), host(2)));
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2));
        assertThat(model.hasUser("tc")).isTrue();
        assertThat(model.violations()).isEmpty();
    }

    @Test
    void scalingDownWithThePrimaryAmongTheRemovedStepsItDownFirstAndShrinksOneMemberAtATime() {
        converge(5, "7.0.14");
        model.electPrimary(host(4));
        model.commands().clear();

        converge(3, "7.0.14");

        assertThat(model.violations()).isEmpty();
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2));
        assertThat(statefulSetReplicas).isEqualTo(3);
        assertThat(model.commands())
                .containsExactly(
                        "stepDown " + host(4),
                        "reconfig " + List.of(host(0), host(1), host(2), host(3)),
                        "reconfig " + List.of(host(0), host(1), host(2)));
        assertThat(model.primary()).isNotIn(host(3), host(4));
        assertThat(reasons).contains("SteppingDown", "RemovingMember");
    }

    /** 5 -> 4 with two of the four that stay down: removing the fifth would leave 2 of 4 voters, no majority. */
    @Test
    void scaleDownWaitsWhileTheNextConfigurationWouldLackAHealthyMajority() {
        converge(5, "7.0.14");
        model.down(host(2));
        model.down(host(3));
        model.commands().clear();

        ReplicaSetState state = step(4, "7.0.14");

        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("WaitingForMajority");
            assertThat(c.message())
                    .contains("removing " + host(4))
                    .contains(host(2))
                    .contains(host(3))
                    .contains("2 healthy voting member(s) of 4, fewer than the 3");
        });
        assertThat(model.commands()).noneMatch(c -> c.startsWith("reconfig"));
        assertThat(model.configured()).hasSize(5);
        assertThat(statefulSetReplicas).as("no pod of a configured member goes").isEqualTo(5);
        assertThat(model.violations()).isEmpty();

        model.up(host(3));
        converge(4, "7.0.14");
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2), host(3));
        assertThat(model.violations()).isEmpty();
    }

    /**
     * Members still in their initial sync (newlyAdded) do not vote yet, so they neither make nor break the majority a
     * removal needs: 3 voters of which 2 are healthy may lose the new member they no longer want.
     */
    @Test
    void membersInTheirInitialSyncDoNotCountAsVotersOfTheNextConfiguration() {
        converge(3, "7.0.14");
        model.initialSyncsTake(1_000);
        step(5, "7.0.14");
        step(5, "7.0.14");
        step(5, "7.0.14");
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2), host(3), host(4));
        model.down(host(2));
        model.commands().clear();

        ReplicaSetState state = step(4, "7.0.14");

        assertThat(reason(state)).isEqualTo("RemovingMember");
        assertThat(model.commands()).containsExactly("reconfig " + List.of(host(0), host(1), host(2), host(3)));
        assertThat(model.violations()).isEmpty();
    }

    /** The primary of a rolling upgrade steps down only once the other members answer on the new series. */
    @Test
    void thePrimaryStepsDownOnlyOnceTheOtherMembersRunTheNewSeries() {
        converge(3, "7.0.14");
        String primary = model.primary();
        model.commands().clear();
        // the secondaries' pods carry the new template, their mongod has not restarted into it yet; the primary's pod
        // is old
        ReplicaSetState state = steps.next(target(3, Set.of(primary), "8.0.4"));
        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("WaitingForMembers");
            assertThat(c.message()).contains("steps down once every other member runs mongod 8.0");
        });
        assertThat(model.commands()).isEmpty();
        assertThat(model.primary()).isEqualTo(primary);
    }

    /** A one-member replica set has no one to step down to: its member restarts on the new template at once. */
    @Test
    void theOnlyMemberRestartsWithoutASteppingDown() {
        converge(1, "7.0.14");
        model.commands().clear();
        reasons.clear();
        converge(1, "7.0.15");
        assertThat(model.version(host(0))).isEqualTo("7.0.15");
        assertThat(reasons).containsExactly("RestartingMember", "Converged");
        assertThat(model.commands()).isEmpty();
    }

    /** Secondaries restart from the highest ordinal down, as the StatefulSet controller orders its pods. */
    @Test
    void secondariesRestartFromTheHighestOrdinalDown() {
        converge(3, "7.0.14");
        model.electPrimary(host(2));
        List<String> restarted = new ArrayList<>();
        for (int i = 0; i < 10 && restarted.size() < 2; i++) {
            if (step(3, "7.0.15") instanceof ReplicaSetState.RestartMember r) {
                restarted.add(r.host());
            }
        }
        assertThat(restarted).containsExactly(host(1), host(0));
    }

    /** Lost data, as the primary sees it: a member that answers without its configuration, or re-syncing from scratch. */
    @Test
    void aMemberLostItsDataWhenThePrimarySeesItInAnInitialSync() {
        MemberView empty = new MemberView(host(1), MemberView.Role.UNINITIATED, "7.0.14", List.of());
        MemberView syncing = new MemberView(host(1), MemberView.Role.OTHER, "7.0.14", List.of(host(0), host(1)));
        MemberView secondary = new MemberView(host(1), MemberView.Role.SECONDARY, "7.0.14", List.of(host(0), host(1)));
        assertThat(ReplicaSetSteps.lostItsData(empty, "STARTUP2")).isTrue();
        assertThat(ReplicaSetSteps.lostItsData(syncing, "STARTUP2")).isTrue();
        assertThat(ReplicaSetSteps.lostItsData(syncing, "STARTUP"))
                .as("still loading its configuration")
                .isFalse();
        assertThat(ReplicaSetSteps.lostItsData(syncing, "RECOVERING")).isFalse();
        assertThat(ReplicaSetSteps.lostItsData(empty, null))
                .as("the primary has not seen it yet")
                .isFalse();
        assertThat(ReplicaSetSteps.lostItsData(secondary, "STARTUP2")).isFalse();
    }

    /** Without a primary nothing can be reconfigured: every step waits, reporting the configuration a member still holds. */
    @Test
    void noStepIsTakenWhileNoMemberIsPrimary() {
        converge(3, "7.0.14");
        model.down(model.primary());
        model.down(model.primary());
        assertThat(model.primary()).isNull();
        model.commands().clear();

        ReplicaSetState state = step(4, "7.0.15");

        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("NoPrimary");
            assertThat(c.configured()).containsExactly(host(0), host(1), host(2));
        });
        assertThat(state.initiated()).isTrue();
        assertThat(model.commands()).isEmpty();
    }

    /** A member that lost its data is re-added by removing it first: not while the others lack a healthy majority. */
    @Test
    void aMemberThatLostItsDataWaitsForAHealthyMajorityBeforeItIsReAdded() {
        converge(3, "7.0.14");
        model.electPrimary(host(0));
        model.loseData(host(2));
        model.down(host(1));
        model.commands().clear();

        ReplicaSetState state = step(3, "7.0.14");

        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("WaitingForMajority");
            assertThat(c.message()).contains("re-adding " + host(2)).contains(host(1));
        });
        assertThat(model.commands()).isEmpty();
        assertThat(model.violations()).isEmpty();
    }

    /** A member scaled away keeps its volume: back, it answers with its old data and is not added until it is empty. */
    @Test
    void aReturningMemberWithOldDataIsNotAddedUntilItIsEmpty() {
        converge(3, "7.0.14");
        converge(2, "7.0.14");
        model.commands().clear();

        step(3, "7.0.14"); // the StatefulSet grows; the pod comes back on its old volume
        ReplicaSetState state = step(3, "7.0.14");

        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("WaitingForMember");
            assertThat(c.message()).contains(host(2)).contains("empty member");
        });
        assertThat(model.commands()).isEmpty();
    }

    /** A new member gets an _id above every configured one: MongoDB refuses a configuration with a repeated _id. */
    @Test
    void anAddedMemberGetsAnIdAboveEveryConfiguredOne() {
        ReplicaSetConfig config = new ReplicaSetConfig(
                7,
                List.of(
                        new ReplicaSetConfig.Member(0, host(0), false),
                        new ReplicaSetConfig.Member(4, host(1), false)));
        ReplicaSetConfig next = config.adding(host(2));
        assertThat(next.members()).extracting(ReplicaSetConfig.Member::id).containsExactly(0, 4, 5);
        assertThat(next.members().get(2).newlyAdded()).isTrue();
        assertThat(new ReplicaSetConfig(1, List.of())
                        .adding(host(0))
                        .members()
                        .get(0)
                        .id())
                .isZero();
    }

    /** A new member whose pod stays Pending (no node fits it) is added once it runs; meanwhile an upgrade still rolls. */
    @Test
    void aPendingNewMemberDoesNotHoldTheOtherSteps() {
        converge(3, "7.0.14");
        model.pending(host(3));
        reasons.clear();

        for (int i = 0;
                i < 40 && !List.of(host(0), host(1), host(2)).stream().allMatch(h -> "7.0.15".equals(model.version(h)));
                i++) {
            step(4, "7.0.15");
        }

        assertThat(List.of(host(0), host(1), host(2)))
                .allSatisfy(h -> assertThat(model.version(h)).isEqualTo("7.0.15"));
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2));
        ReplicaSetState waiting = step(4, "7.0.15");
        assertThat(waiting).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("WaitingForMember");
            assertThat(c.message()).contains(host(3)).contains("Pending");
        });
        assertThat(model.violations()).isEmpty();

        model.scheduled(host(3));
        converge(4, "7.0.15");
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2), host(3));
    }

    /** A RECOVERING member is neither taken for one that lost its data nor restarted; the roll waits for it, naming it. */
    @Test
    void aRecoveringMemberIsWaitedForNotReAdded() {
        converge(3, "7.0.14");
        model.recovering(host(1));
        model.commands().clear();
        reasons.clear();

        ReplicaSetState state = null;
        for (int i = 0; i < 5; i++) {
            state = step(3, "7.0.15");
        }

        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("WaitingForMembers");
            assertThat(c.message()).contains(host(1));
        });
        assertThat(reasons).doesNotContain("ReAddingMember", "RestartingMember");
        assertThat(model.commands()).noneMatch(c -> c.startsWith("reconfig"));
        model.recovered(host(1));
        converge(3, "7.0.15");
        assertThat(model.violations()).isEmpty();
    }

    /** A member in its initial sync (STARTUP2, newlyAdded) is not removed as one that lost its data, and does not vote yet. */
    @Test
    void aNewMemberInItsInitialSyncIsLeftToFinishIt() {
        converge(3, "7.0.14");
        model.initialSyncsTake(4);
        model.commands().clear();
        reasons.clear();

        // while the new member syncs (STARTUP2, newlyAdded), each step sees it; none may take it for a member that lost
        // its data
        for (int i = 0; i < 10; i++) {
            step(4, "7.0.14");
        }
        converge(4, "7.0.14");

        assertThat(reasons).contains("AddingMember").doesNotContain("ReAddingMember");
        assertThat(model.commands()).containsExactly("reconfig " + List.of(host(0), host(1), host(2), host(3)));
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2), host(3));
        assertThat(model.violations()).isEmpty();
    }

    /**
     * The reconciler sizes the StatefulSet from its last step, which an operator restart forgets: until a step
     * has read the configuration again, nothing shrinks (the members above the wanted size are still configured).
     */
    @Test
    void anOperatorRestartMidScaleDownShrinksNothingUntilTheConfigurationIsReadAgain() {
        converge(5, "7.0.14");
        ReplicaSetState first = step(3, "7.0.14"); // the scale-down begins: one member is being removed
        assertThat(first).isNotInstanceOf(ReplicaSetState.Converged.class);

        // restarted: no last step; the status still says the replica set was initiated
        statefulSetReplicas = FastTierPods.replicas(LAYOUT, 3, statefulSetReplicas, null, true);
        model.podsRunning(LAYOUT.memberHosts(statefulSetReplicas), "7.0.14");
        assertThat(model.violations()).as("no pod of a configured member goes").isEmpty();
        assertThat(statefulSetReplicas).isGreaterThan(3);

        converge(3, "7.0.14");
        assertThat(model.violations()).isEmpty();
        assertThat(model.configured()).containsExactly(host(0), host(1), host(2));
    }

    /** Every restarted mongod answers hello without a set name while it loads its config (STARTUP): it kept its data. */
    @Test
    void aRestartedMemberStillStartingIsNotTakenForOneThatLostItsData() {
        converge(3, "7.0.14");
        model.membersStartSlowly(3);
        model.commands().clear();
        reasons.clear();

        converge(3, "7.0.15");

        assertThat(reasons).doesNotContain("ReAddingMember");
        assertThat(model.commands()).noneMatch(c -> c.startsWith("reconfig"));
        assertThat(model.violations()).isEmpty();
        assertThat(List.of(host(0), host(1), host(2)))
                .allSatisfy(h -> assertThat(model.version(h)).isEqualTo("7.0.15"));
    }

    @Test
    void upgradeRestartsSecondariesFirstThenThePrimaryAfterAStepDownThenSetsTheFcv() {
        converge(3, "7.0.14");
        wantedFcv = "8.0";
        String primary = model.primary();
        model.commands().clear();
        reasons.clear();

        converge(3, "8.0.4");

        assertThat(model.violations()).isEmpty();
        assertThat(List.of(host(0), host(1), host(2)))
                .allSatisfy(h -> assertThat(model.version(h)).isEqualTo("8.0.4"));
        assertThat(model.featureCompatibilityVersion()).isEqualTo("8.0");
        assertThat(model.commands()).containsExactly("stepDown " + primary, "setFCV 8.0");
        int stepDown = reasons.indexOf("SteppingDown");
        assertThat(reasons.subList(0, stepDown)).containsExactly("RestartingMember", "RestartingMember");
        assertThat(reasons.subList(stepDown, reasons.size()))
                .containsExactly("SteppingDown", "RestartingMember", "SettingFeatureCompatibilityVersion", "Converged");
    }

    /** MongoDB allows a binary rollback while the FCV is still the older series: the FCV is raised only when the spec says so. */
    @Test
    void anUpgradeLeavesTheFcvSoTheBinaryCanGoBackUntilTheSpecRaisesIt() {
        converge(3, "7.0.14");
        converge(3, "8.0.4");
        assertThat(model.featureCompatibilityVersion()).isEqualTo("7.0");
        assertThat(model.commands()).noneMatch(c -> c.startsWith("setFCV"));

        converge(3, "7.0.14"); // the new release misbehaves: back to the old binary
        assertThat(List.of(host(0), host(1), host(2)))
                .allSatisfy(h -> assertThat(model.version(h)).isEqualTo("7.0.14"));
        assertThat(model.violations()).isEmpty();

        converge(3, "8.0.4");
        wantedFcv = "8.0";
        converge(3, "8.0.4");
        assertThat(model.featureCompatibilityVersion()).isEqualTo("8.0");
        assertThat(model.violations()).isEmpty();
    }

    @Test
    void theFcvWaitsUntilEveryMemberRunsTheNewBinary() {
        converge(3, "7.0.14");
        wantedFcv = "8.0";
        step(3, "8.0.4"); // the first secondary restarts
        step(3, "8.0.4");
        assertThat(model.featureCompatibilityVersion()).isEqualTo("7.0");
        assertThat(model.commands()).noneMatch(c -> c.startsWith("setFCV"));
    }

    @Test
    void noFcvChangeWhileAMemberStillRunsTheOldBinaryOnACurrentPod() {
        converge(3, "7.0.14");
        wantedFcv = "8.0";
        // every pod carries the new template, but one container still runs 7.0 (not restarted yet)
        model.restarted(host(1), "8.0.4");
        model.restarted(host(2), "8.0.4");
        podTemplate.replaceAll((h, v) -> "8.0.4");
        ReplicaSetState state = steps.next(target(3, Set.of(), "8.0.4"));
        assertThat(model.commands()).noneMatch(c -> c.startsWith("setFCV"));
        assertThat(model.featureCompatibilityVersion()).isEqualTo("7.0");
        assertThat(state).isInstanceOf(ReplicaSetState.Converged.class);
    }

    @Test
    void aRestartWaitsWhileAnotherMemberIsUnhealthy() {
        converge(3, "7.0.14");
        model.loseData(host(2));
        podTemplate.replaceAll((h, v) -> "7.0.14");
        ReplicaSetState state = steps.next(target(3, Set.of(host(0), host(1)), "8.0.4"));
        // host 2 lost its data: it is re-added first, and nothing restarts while it is not a full member
        assertThat(state)
                .isInstanceOfSatisfying(
                        ReplicaSetState.Converging.class,
                        c -> assertThat(c.reason()).isEqualTo("ReAddingMember"));
    }

    @Test
    void aMemberThatLostItsDataIsReAddedAsANewMemberAndNothingIsInitiatedAgain() {
        converge(3, "7.0.14");
        model.loseData(host(0));
        model.commands().clear();

        converge(3, "7.0.14");

        assertThat(model.commands()).noneMatch(c -> c.startsWith("initiate"));
        assertThat(model.commands())
                .containsExactly(
                        "reconfig " + List.of(host(1), host(2)), "reconfig " + List.of(host(1), host(2), host(0)));
        assertThat(model.violations()).isEmpty();
    }

    @Test
    void aReplicaSetRecordedAsInitiatedIsNeverInitiatedAgainEvenWhenEveryMemberIsEmpty() {
        converge(1, "7.0.14");
        model.loseData(host(0));
        model.commands().clear();

        ReplicaSetState state = step(1, "7.0.14");

        assertThat(state)
                .isInstanceOfSatisfying(
                        ReplicaSetState.Converging.class,
                        c -> assertThat(c.reason()).isEqualTo("ReplicaSetMissing"));
        assertThat(model.commands()).isEmpty();
    }

    @Test
    void aReCreatedResourceAdoptsTheReplicaSetItsVolumesHold() {
        model.existing(List.of(host(0), host(1), host(2)), "7.0.14");
        statefulSetReplicas = 3;
        List.of(host(0), host(1), host(2)).forEach(h -> podTemplate.put(h, "7.0.14"));

        converge(3, "7.0.14");

        assertThat(model.commands()).isEmpty();
        assertThat(initiated).isTrue();
        assertThat(model.violations()).isEmpty();
    }

    @Test
    void noInitiationWhileAMemberDoesNotAnswer() {
        statefulSetReplicas = 3;
        model.podsRunning(List.of(host(0), host(1)), "7.0.14");
        ReplicaSetState state = steps.next(target(3, Set.of(), "7.0.14"));
        assertThat(state).isInstanceOfSatisfying(ReplicaSetState.Converging.class, c -> {
            assertThat(c.reason()).isEqualTo("MembersUnreachable");
            assertThat(c.message()).contains(host(2));
        });
        assertThat(state.initiated())
                .as("nothing for the status to record as initiated")
                .isFalse();
        assertThat(model.commands()).isEmpty();
    }

    @Test
    void theDataPlaneWaitsUntilEveryPartsUserIsOnTheFastTierWithItsOwnRoles() {
        List<CollectionSpec> collections = List.of(new CollectionSpec("shop", "orders", "_id", "30d"));
        Map<String, String> operator = Map.of(
                UsersSecretDependent.DATA_PLANE_USERNAME,
                "thermocline",
                UsersSecretDependent.DATA_PLANE_PASSWORD,
                "op");
        // the warmer's Secret is not in the cache yet: no Converged (which would start the data plane) until it is
        users = UsersSecretDependent.fastTierUsers(
                LAYOUT,
                collections,
                operator,
                name -> name.contains("warmer")
                        ? null
                        : new SecretBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .addToData(DataPlanePart.PASSWORD, "cHc=")
                                .build());
        for (int i = 0; i < 40 && !reasons.contains("WaitingForCredentials"); i++) {
            step(3, "7.0.14");
        }
        assertThat(reasons).contains("WaitingForCredentials").doesNotContain("Converged");
        assertThat(model.hasUser("thermocline-proxy")).isFalse();

        users = UsersSecretDependent.fastTierUsers(
                LAYOUT,
                collections,
                operator,
                name -> new SecretBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .endMetadata()
                        .addToData(DataPlanePart.PASSWORD, "cHc=")
                        .build());
        converge(3, "7.0.14");
        for (DataPlanePart part : DataPlanePart.values()) {
            assertThat(model.hasUser(part.user())).as(part.user()).isTrue();
        }
        assertThat(model.hasUser("thermocline")).isTrue();
        assertThat(model.user("thermocline-warmer").actions())
                .containsExactlyInAnyOrder("find", "insert", "createCollection");
        assertThat(model.user("thermocline-warmer").namespaces()).containsExactly("shop.orders");
        assertThat(model.user("thermocline-warmer").password()).isEqualTo("pw");
        assertThat(model.violations()).isEmpty();
    }

    /** Reconciles until converged, like the operator's requeue loop. */
    private void converge(int members, String version) {
        for (int i = 0; i < 40; i++) {
            if (step(members, version) instanceof ReplicaSetState.Converged && statefulSetReplicas == members) {
                return;
            }
        }
        throw new AssertionError("not converged after 40 steps: " + reasons + " " + model.violations());
    }

    /** One reconcile: a replica-set step, the StatefulSet sized, a pod restarted if asked; then the StatefulSet controller. */
    private ReplicaSetState step(int members, String version) {
        Set<String> outdated = new HashSet<>();
        podTemplate.forEach((h, v) -> {
            if (!v.equals(version)) {
                outdated.add(h);
            }
        });
        ReplicaSetState state = statefulSetReplicas == 0 ? null : steps.next(target(members, outdated, version));
        if (state != null) {
            initiated |= state.initiated();
            reasons.add(reason(state));
        }
        statefulSetReplicas = FastTierPods.replicas(LAYOUT, members, statefulSetReplicas, state, initiated);
        List<String> pods = LAYOUT.memberHosts(statefulSetReplicas);
        podTemplate.keySet().retainAll(pods);
        pods.forEach(h -> podTemplate.putIfAbsent(h, version));
        model.podsRunning(pods, version);
        if (state instanceof ReplicaSetState.RestartMember restart) {
            model.restarted(restart.host(), version);
            podTemplate.put(restart.host(), version);
        }
        return state;
    }

    private ReplicaSetTarget target(int members, Set<String> outdated, String version) {
        return new ReplicaSetTarget(
                "c-fast",
                LAYOUT.memberHosts(members),
                LAYOUT.memberHosts(statefulSetReplicas),
                outdated,
                version,
                initiated,
                "root",
                "rootpw",
                users,
                wantedFcv);
    }

    private static String reason(ReplicaSetState state) {
        if (state instanceof ReplicaSetState.Converging c) {
            return c.reason();
        }
        return state instanceof ReplicaSetState.RestartMember r ? r.reason() : "Converged";
    }

    private static String host(int ordinal) {
        return LAYOUT.memberHost(ordinal);
    }
}
