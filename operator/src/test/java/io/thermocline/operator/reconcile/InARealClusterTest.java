package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.kit.ApiServerValidation;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.kit.SimulatedCluster;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator in a namespace that behaves like a real cluster ({@link SimulatedCluster}: a garbage
 * collector that honours propagation policies, owned pods and PVCs, pods that stay Terminating).
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class InARealClusterTest extends OperatorOnFakes {

    private static final Duration WAIT = Duration.ofSeconds(30);

    InARealClusterTest() {
        super("d", WAIT);
    }

    private SimulatedCluster cluster;

    @BeforeEach
    void simulatedCluster() {
        cluster = new SimulatedCluster(client, ns, mockServer.getKubernetesMockServer());
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** {@code kubectl delete --cascade=foreground} and Argo CD's prune: the collector runs while the finalizer drains. */
    @Test
    void foregroundDeletionKeepsTheDataHoldersUntilTheDrainIsDone() {
        running("fg", "Delete");
        tiering.report(new TieringSnapshot(40L, false, 10L, 5L)); // the archive lacks writes
        cluster.garbageCollector().delete(stored("fg"), DeletionPropagation.FOREGROUND);

        // positive signals first: the operator finished deletion passes that found the lag, the collector took what it
        // may
        await().atMost(WAIT).untilAsserted(() -> assertThat(reasons()).contains("DeletionWaitingForFeeder"));
        awaitLaterDeletionPass("fg");
        await().atMost(WAIT)
                .untilAsserted(() ->
                        assertThat(cluster.garbageCollector().collected()).contains("PodDisruptionBudget/fg-fast"));
        assertThat(stored("fg")).as("held by the finalizer").isNotNull();
        assertThat(get(StatefulSet.class, "fg-fast"))
                .as("the fast tier outlives the drain")
                .isNotNull();
        assertThat(claims("fg")).as("its volumes too").hasSize(3);
        assertThat(get(Deployment.class, "fg-feeder"))
                .as("and the feeder that mirrors what is left")
                .isNotNull();
        assertThat(cluster.workloads().pods("fg-fast-"))
                .as("and the members' pods")
                .hasSize(3)
                .allSatisfy(
                        p -> assertThat(p.getMetadata().getDeletionTimestamp()).isNull());
        assertThat(cluster.garbageCollector().collected())
                .noneMatch(o -> o.startsWith("StatefulSet/") || o.startsWith("Deployment/"));

        tiering.report(new TieringSnapshot(0L, true, 10L, 15L));
        await().atMost(WAIT).until(() -> stored("fg") == null);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(get(StatefulSet.class, "fg-fast")).isNull();
            assertThat(claims("fg"))
                    .as("Delete: the operator deletes the volumes after the drain")
                    .isEmpty();
            assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(get(Secret.class, "fg-users")).isNull();
        });
    }

    @Test
    void theStatefulSetControllerNeverDeletesVolumes() {
        running("claims", "Delete");
        assertThat(get(StatefulSet.class, "claims-fast")
                        .getSpec()
                        .getPersistentVolumeClaimRetentionPolicy()
                        .getWhenDeleted())
                .isEqualTo("Retain");
        assertThat(claims("claims"))
                .allSatisfy(
                        c -> assertThat(c.getMetadata().getOwnerReferences()).isNullOrEmpty());
    }

    /** Retain: the volumes and credentials stay, the workloads go (nothing owner-references them any more). */
    @Test
    void backgroundDeletionWithRetainKeepsTheVolumesAndRemovesTheWorkloads() {
        running("keep", "Retain");
        cluster.garbageCollector().delete(stored("keep"), DeletionPropagation.BACKGROUND);
        await().atMost(WAIT).until(() -> stored("keep") == null);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(get(StatefulSet.class, "keep-fast")).isNull();
            assertThat(get(Deployment.class, "keep-proxy")).isNull();
            assertThat(get(Deployment.class, "keep-feeder")).isNull();
            assertThat(get(Service.class, "keep-fast")).isNull();
            assertThat(cluster.workloads().pods("keep-")).isEmpty();
        });
        assertThat(claims("keep")).hasSize(3);
        assertThat(get(Secret.class, "keep-users")).isNotNull();
    }

    /** Volumes whose StatefulSet is gone (deleted by hand, or by an earlier operator's collection) still hold data. */
    @Test
    void volumesWithoutTheirStatefulSetAreNotNothingToDrain() {
        running("orphan", "Delete");
        tiering.report(new TieringSnapshot(40L, false, 10L, 5L));
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("orphan")
                .delete();
        await().atMost(WAIT).until(() -> stored("orphan").getMetadata().getDeletionTimestamp() != null);
        // as a collector that ran before this operator version would have left it (no reconcile re-creates it now)
        client.apps().statefulSets().inNamespace(ns).withName("orphan-fast").delete();

        // each deletion pass that waits on the volumes posts its Event (the API server answers 409 after the first)
        AtomicInteger waitingPasses = cluster.apiServer()
                .count(r -> r.method() == HttpMethod.POST
                        && r.getPath().startsWith("/api/v1/namespaces/" + ns + "/events")
                        && ApiServerValidation.body(r).contains("DeletionVolumesWithoutFastTier"));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                client.v1().events().inNamespace(ns).list().getItems())
                        .extracting(e -> e.getReason())
                        .contains("DeletionVolumesWithoutFastTier"));
        int seen = waitingPasses.get();
        await().atMost(WAIT).until(() -> waitingPasses.get() >= seen + 2); // a whole pass after the one seen
        assertThat(stored("orphan")).isNotNull();
        assertThat(claims("orphan")).hasSize(3);

        edit(
                "orphan",
                c -> c.getMetadata().getAnnotations().put(ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION, "true"));
        await().atMost(WAIT).until(() -> stored("orphan") == null);
        await().atMost(WAIT).untilAsserted(() -> assertThat(claims("orphan")).isEmpty());
    }

    /** The checkpoint passes dead-lettered writes, but the archive never got them: with Delete they would be lost. */
    @Test
    void deadLetteredWritesHoldTheDeletionAndSayWhy() {
        running("dead", "Delete");
        tiering.report(new TieringSnapshot(
                0L,
                true,
                10L,
                10L,
                List.of(),
                new TieringSnapshot.FeederAlerts(2, "shop.orders _id 7 upsert: E11000 duplicate key", null, false)));
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("dead")
                .delete();

        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                client.v1().events().inNamespace(ns).list().getItems())
                        .filteredOn(e -> "DeletionDeadLetters".equals(e.getReason()))
                        .singleElement()
                        .satisfies(e -> assertThat(e.getMessage())
                                .contains("2 dead-lettered write(s)")
                                .contains("E11000")));
        awaitLaterDeletionPass("dead");
        assertThat(stored("dead")).isNotNull();
        assertThat(claims("dead")).hasSize(3);

        tiering.report(new TieringSnapshot(0L, true, 10L, 10L));
        await().atMost(WAIT).until(() -> stored("dead") == null);
    }

    @Test
    void aPauseKeepsTheFeederRunningWhileDeadLettersWait() {
        running("hold", "Retain");
        tiering.report(new TieringSnapshot(
                0L,
                true,
                10L,
                10L,
                List.of(),
                new TieringSnapshot.FeederAlerts(1, "shop.orders _id 9 upsert: E11000", null, false)));
        edit("hold", c -> c.getSpec().paused = true);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(condition("hold", ConditionType.Ready).getReason())
                                .isEqualTo("PausingDeadLetters"));
        assertThat(get(Deployment.class, "hold-feeder").getSpec().getReplicas()).isEqualTo(1);
        tiering.report(new TieringSnapshot(0L, true, 10L, 10L));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                get(Deployment.class, "hold-feeder").getSpec().getReplicas())
                        .isZero());
    }

    /** A disruption budget protects only the pods its selector matches: the members' and the proxies' own. */
    @Test
    void disruptionBudgetsSelectTheirPods() {
        running("pdb", "Retain");
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(selected(get(PodDisruptionBudget.class, "pdb-fast")))
                    .containsExactlyInAnyOrder("pdb-fast-0", "pdb-fast-1", "pdb-fast-2");
            assertThat(selected(get(PodDisruptionBudget.class, "pdb-proxy")))
                    .hasSize(2)
                    .allMatch(p -> p.startsWith("pdb-proxy-"));
        });
    }

    /** A Terminating proxy pod still serves its connections: writes are not stopped until it is gone. */
    @Test
    void deletionWaitsForTerminatingProxyPods() {
        running("term", "Delete");
        cluster.workloads().holdTerminating();
        tiering.report(new TieringSnapshot(0L, true, 10L, 10L));
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("term")
                .delete();

        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(cluster.workloads().pods("term-proxy-"))
                        .isNotEmpty()
                        .allSatisfy(p -> assertThat(p.getMetadata().getDeletionTimestamp())
                                .isNotNull()));
        await().atMost(WAIT).untilAsserted(() -> assertThat(reasons()).contains("DeletionStoppingWrites"));
        awaitLaterDeletionPass("term");
        assertThat(stored("term"))
                .as("held while a Terminating proxy pod may still take a write")
                .isNotNull();
        assertThat(get(StatefulSet.class, "term-fast")).isNotNull();
        assertThat(reasons()).doesNotContain("DeletionWaitingForFeeder");

        cluster.workloads().endTerminating();
        await().atMost(WAIT).until(() -> stored("term") == null);
    }

    /**
     * With Delete the Secrets go at the end; the finalizer's removal after them can fail (a conflict, the API server
     * away) or the operator restart: the retried deletion must finish, not refuse for want of the users Secret.
     */
    @Test
    void aDeletionRetriedAfterItsSecretsWentStillFinishes() {
        running("retry", "Delete");
        tiering.report(new TieringSnapshot(0L, true, 10L, 10L));
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("retry")
                .delete();
        // the next two writes of the resource itself (not its status) fail: the operator's own marks, the finalizer's
        // removal
        AtomicInteger failed = new AtomicInteger();
        mockServer
                .expect()
                .patch()
                .withPath("/apis/thermocline.io/v1alpha1/namespaces/" + ns + "/thermoclineclusters/retry")
                .andReply(500, request -> {
                    failed.incrementAndGet();
                    return new io.fabric8.kubernetes.api.model.StatusBuilder()
                            .withCode(500)
                            .withMessage("etcd timeout")
                            .build();
                })
                .times(2);
        await().atMost(WAIT).until(() -> stored("retry") == null);
        assertThat(failed)
                .as("both injected failures met a write of the deletion")
                .hasValue(2);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(get(Secret.class, "retry-users")).isNull();
            assertThat(claims("retry")).isEmpty();
        });
    }

    /** Returns once a deletion pass that started after this call has completed (each pass reads the mode document first). */
    private void awaitLaterDeletionPass(String name) {
        long before = modes.controller(ns, name).reads();
        await().atMost(WAIT).until(() -> modes.controller(ns, name).reads() >= before + 2);
    }

    /**
     * A StatefulSet update the API server refuses (an immutable field: a resource created before the CRD refused the edit, or
     * where CEL validation is off) is reported, and does not stop the replica-set steps, the proxy and the workers after it.
     */
    @Test
    void aRefusedStatefulSetUpdateLeavesTheRestOfTheClusterManaged() {
        running("immut", "Retain");
        edit("immut", c -> {
            c.getSpec().fastTier.storage.storageClassName = "fast-ssd";
            c.getSpec().proxy.replicas = 3;
        });

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            var applied = condition("immut", ConditionType.ResourcesApplied);
            assertThat(applied.getReason()).isEqualTo("ApiRejected");
            assertThat(applied.getMessage())
                    .contains("fast-tier")
                    .contains("Forbidden")
                    .contains("the rest is still managed");
        });
        int stepsBefore = replicaSet.targets().size();
        assertThat(cluster.apiServer().refused())
                .as("the kit refused the update, as the API server does")
                .isNotEmpty();
        assertThat(get(StatefulSet.class, "immut-fast")
                        .getSpec()
                        .getVolumeClaimTemplates()
                        .get(0)
                        .getSpec()
                        .getStorageClassName())
                .isNull();
        // what depends on the fast tier goes on: the proxy scales, the replica set is still stepped
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(get(Deployment.class, "immut-proxy").getSpec().getReplicas())
                    .isEqualTo(3);
            assertThat(replicaSet.targets().size())
                    .as("replica-set steps after the refusal")
                    .isGreaterThan(stepsBefore);
        });
        assertThat(condition("immut", ConditionType.Ready).getReason()).isEqualTo("ApiRejected");
    }

    /**
     * Re-created on its retained volumes, a resource has no status: the version guards read what the volumes record, so the
     * fast tier does not start a binary older than its data's featureCompatibilityVersion (mongod would refuse to start).
     */
    @Test
    void aResourceReCreatedOnRetainedVolumesKeepsTheVersionGuards() {
        archive.answer(new io.thermocline.operator.archive.ArchiveReport.Reachable("8.0.4", "archive-rs"));
        running("again", "Retain");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(claims("again"))
                        .hasSize(3)
                        .allSatisfy(c -> assertThat(c.getMetadata().getAnnotations())
                                .containsEntry("thermocline.io/feature-compatibility-version", "8.0")
                                .containsEntry("thermocline.io/mongod-version", "8.0.4")));
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("again")
                .delete();
        await().atMost(WAIT).until(() -> stored("again") == null && get(StatefulSet.class, "again-fast") == null);
        assertThat(claims("again")).hasSize(3);

        // the archive went back to 7.0 meanwhile; the data's FCV is 8.0
        archive.answer(new io.thermocline.operator.archive.ArchiveReport.Reachable("7.0.14", "archive-rs"));
        create(cluster(ns, "again"));

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            var compatible = condition("again", ConditionType.VersionCompatible);
            assertThat(compatible.getReason()).isEqualTo("DowngradeRefused");
            assertThat(get(StatefulSet.class, "again-fast").getSpec().getTemplate().getSpec().getContainers().stream()
                            .filter(c -> c.getName().equals("mongod"))
                            .findFirst()
                            .orElseThrow()
                            .getImage())
                    .endsWith(":8.0.4");
        });
        assertThat(replicaSet.model(ns, "again").violations()).isEmpty();
    }

    private List<String> selected(PodDisruptionBudget budget) {
        return client
                .pods()
                .inNamespace(ns)
                .withLabelSelector(budget.getSpec().getSelector())
                .list()
                .getItems()
                .stream()
                .map(p -> p.getMetadata().getName())
                .toList();
    }

    private void running(String name, String retention) {
        ThermoclineCluster c = cluster(ns, name);
        c.getSpec().fastTier.storage.retentionPolicy = retention;
        c.getMetadata().setAnnotations(new java.util.HashMap<>(Map.of("test", "x")));
        create(c);
        await().atMost(WAIT).until(() -> get(Deployment.class, name + "-feeder"), Objects::nonNull);
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(claims(name)).hasSize(3);
            assertThat(cluster.workloads().pods(name + "-proxy")).isNotEmpty();
            assertThat(stored(name).getMetadata().getFinalizers()).isNotEmpty();
        });
    }

    private List<PersistentVolumeClaim> claims(String name) {
        return client.persistentVolumeClaims().inNamespace(ns).list().getItems().stream()
                .filter(c -> c.getMetadata().getName().startsWith("data-" + name + "-fast-"))
                .toList();
    }
}
