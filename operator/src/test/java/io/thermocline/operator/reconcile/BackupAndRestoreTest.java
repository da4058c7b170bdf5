package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.BackupPointSpec;
import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.RestoreSpec;
import io.thermocline.operator.api.v1alpha1.RestoreStep;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.backup.OperationJobs;
import io.thermocline.operator.fakes.ModeController;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ConditionType;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 43 item 4: spec.backupPoint and spec.restore run the data plane's {@code backup-point} and {@code restore-sync}
 * as Jobs, report each step in status, conditions and Events, and keep the operator's mode requests out of a restore's
 * way. The Jobs do not run on the mock API server: each test plays the Job controller (a pod with its termination
 * message, then the Job's condition) and the data plane's effect on the mode document ({@link ModeController}).
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@Timeout(180)
class BackupAndRestoreTest extends OperatorOnFakes {

    private static final Duration WAIT = Duration.ofSeconds(45);
    private static final String REACHED = "{\"outcome\": \"reached\", \"archiveTime\": {\"t\": 1796416265, \"i\": 3},"
            + " \"archiveTimeIso\": \"2026-12-04T20:31:05Z\", \"restoreAtOrAfter\": \"2026-12-04T20:31:06Z\","
            + " \"fastTierTime\": {\"t\": 1796416264, \"i\": 9}, \"acknowledgedBefore\": \"2026-12-04T20:31:04.912Z\","
            + " \"archiveAuthoritative\": false}";
    private static final String DEAD_LETTERS = "{\"outcome\": \"refused\", \"reason\": \"DEAD_LETTERS\", \"message\":"
            + " \"the archive refused the feeder's write of shop.orders {\\\"_id\\\": 77}: upsert failed with code 11000\"}";

    BackupAndRestoreTest() {
        super("b", WAIT);
    }

    @Test
    void aBackupPointAskedInTheSpecRunsOnceAndReportsTheArchiveTime() {
        modes.controller(ns, "bp");
        createReady("bp", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitPhase("bp", "Tiered");

        edit("bp", c -> c.getSpec().backupPoint = new BackupPointSpec("nightly-1"));
        String job = OperationJobs.backupPointJob(new ClusterLayout("bp", ns), "nightly-1");
        Job created = await().atMost(WAIT).until(() -> job(job), Objects::nonNull);
        var container =
                created.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(String.join(" ", container.getCommand()))
                .contains("thermocline backup-point --config /etc/thermocline/thermocline.yaml --json --timeout 600")
                .contains("> /dev/termination-log");
        assertThat(container.getEnv())
                .as("the proxy's fast-tier user")
                .anySatisfy(e ->
                        assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("bp-proxy-fast-user"));
        assertThat(created.getSpec().getBackoffLimit())
                .as("a result is final: a new point is a new request")
                .isZero();
        assertThat(created.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getController()).isTrue());
        assertReachesTheFastTier("bp", created);
        awaitStored("bp", c -> {
            assertThat(c.getStatus().backupPoint.state).isEqualTo("Running");
            assertThat(condition(c, ConditionType.BackupPointReached).getReason())
                    .isEqualTo("Running");
        });

        finish(job, 0, REACHED);
        awaitStored("bp", c -> {
            assertThat(c.getStatus().backupPoint.state).isEqualTo("Reached");
            assertThat(c.getStatus().backupPoint.archiveTime.t).isEqualTo(1796416265L);
            assertThat(c.getStatus().backupPoint.archiveTime.i).isEqualTo(3L);
            assertThat(c.getStatus().backupPoint.restoreAtOrAfter).isEqualTo("2026-12-04T20:31:06Z");
            assertThat(c.getStatus().backupPoint.acknowledgedBefore).isEqualTo("2026-12-04T20:31:04.912Z");
            assertThat(condition(c, ConditionType.BackupPointReached).getStatus())
                    .isEqualTo("True");
            assertThat(condition(c, ConditionType.BackupPointReached).getMessage())
                    .contains("Timestamp(1796416265, 3)")
                    .contains("restore to 2026-12-04T20:31:06Z or later");
        });

        // the Job goes (a TTL, a user): the request's result stays, and nothing runs again; the reconcile of the next
        // generation is the signal that the operator has seen the Job gone
        client.batch().v1().jobs().inNamespace(ns).withName(job).delete();
        await().atMost(WAIT).until(() -> job(job) == null);
        edit("bp", c -> c.getSpec().backupPoint.timeoutSeconds = 900);
        long generation = stored("bp").getMetadata().getGeneration();
        await().atMost(WAIT).until(() -> Objects.equals(stored("bp").getStatus().observedGeneration, generation));
        assertThat(job(job)).isNull();
        assertThat(stored("bp").getStatus().backupPoint.state).isEqualTo("Reached");

        // a new request runs a new point; the data plane refuses it while a dead letter exists
        edit("bp", c -> c.getSpec().backupPoint = new BackupPointSpec("nightly-2"));
        String second = OperationJobs.backupPointJob(new ClusterLayout("bp", ns), "nightly-2");
        await().atMost(WAIT).until(() -> job(second), Objects::nonNull);
        finish(second, 1, DEAD_LETTERS);
        awaitStored("bp", c -> {
            assertThat(c.getStatus().backupPoint.state).isEqualTo("Refused");
            assertThat(c.getStatus().backupPoint.reason).isEqualTo("DEAD_LETTERS");
            assertThat(c.getStatus().backupPoint.archiveTime).isNull();
            assertThat(condition(c, ConditionType.BackupPointReached).getReason())
                    .isEqualTo("Refused");
            assertThat(condition(c, ConditionType.BackupPointReached).getMessage())
                    .contains("shop.orders {\"_id\": 77}")
                    .contains("new spec.backupPoint.request");
        });
        assertThat(reasons()).containsOnlyOnce("BackupPointReached", "BackupPointRefused");
        assertThat(reasons()).filteredOn("BackupPointRunning"::equals).hasSize(2);
    }

    @Test
    void aRestoreHoldsTheFleetWaitsForTheArchiveThenResetsWarmsAndCutsOver() {
        ModeController fleet = modes.controller(ns, "rs");
        createReady("rs", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitPhase("rs", "Tiered");
        String warmerBefore = stored("rs").getStatus().warmerJob;
        ClusterLayout layout = new ClusterLayout("rs", ns);

        edit("rs", c -> c.getSpec().restore = new RestoreSpec("pbm-2026-12-06", RestoreStep.HOLD));
        String hold = OperationJobs.restoreJob(layout, "pbm-2026-12-06", RestoreStep.HOLD);
        Job holdJob = await().atMost(WAIT).until(() -> job(hold), Objects::nonNull);
        assertThat(holdJob.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getCommand())
                .containsExactly(
                        "thermocline", "restore-sync", "--hold", "--config", "/etc/thermocline/thermocline.yaml");
        awaitRestore("rs", "Holding", "True", "RestoreHolding");
        assertReachesTheFastTier("rs", holdJob);

        // restore-sync --hold: the fleet in Restoring, draining requested by restore-sync
        fleet.heldForRestore();
        finish(hold, 0, null);
        awaitStored("rs", c -> {
            assertThat(c.getStatus().restore.state).isEqualTo("Held");
            assertThat(condition(c, ConditionType.Restoring).getMessage())
                    .contains("restore the archive now")
                    .contains("spec.restore.step: resync");
            assertThat(c.getStatus().mode.phase).isEqualTo("Restoring");
            assertThat(condition(c, ConditionType.ModeActive).getReason()).isEqualTo("Restoring");
        });
        // the reconcile that read Restoring would have written spec.mode's tiered request: it did not
        assertThat(fleet.requests()).containsExactly(request("tiered"));

        // the user restored the archive; then the resync
        edit("rs", c -> c.getSpec().restore.step = RestoreStep.RESYNC);
        String resync = OperationJobs.restoreJob(layout, "pbm-2026-12-06", RestoreStep.RESYNC);
        Job resyncJob = await().atMost(WAIT).until(() -> job(resync), Objects::nonNull);
        assertThat(resyncJob
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getCommand())
                .containsExactly("thermocline", "restore-sync", "--config", "/etc/thermocline/thermocline.yaml");
        awaitRestore("rs", "Resyncing", "True", "RestoreResyncing");
        fleet.resyncedAfterRestore();
        finish(resync, 0, null);

        // Drained, the archive answering: a warmer Job of its own refills the fast tier before any cutover
        String warmer = await().atMost(WAIT)
                .ignoreExceptions()
                .until(
                        () -> {
                            ThermoclineCluster c = stored("rs");
                            return "Warming".equals(c.getStatus().restore.state)
                                            && "Drained".equals(c.getStatus().mode.phase)
                                    ? c.getStatus().warmerJob
                                    : null;
                        },
                        Objects::nonNull);
        assertThat(warmer).isNotEqualTo(warmerBefore).startsWith("rs-warmer-");
        assertThat(stored("rs").getStatus().restore.job).isEqualTo(warmer);
        await().atMost(WAIT).until(() -> job(warmer) != null && job(warmerBefore) == null);
        assertThat(fleet.requests())
                .as("no cutover before the fast tier is warm")
                .containsExactly(request("tiered"));

        finish(warmer, 0, null);
        awaitStored("rs", c -> {
            assertThat(c.getStatus().restore.state).isEqualTo("Restored");
            assertThat(condition(c, ConditionType.Restoring).getStatus()).isEqualTo("False");
            assertThat(condition(c, ConditionType.Restoring).getReason()).isEqualTo("Restored");
            assertThat(c.getStatus().mode.phase).isEqualTo("Tiered");
            assertThat(c.getStatus().warmerJob)
                    .as("the restore's warmer stays the current one")
                    .isEqualTo(warmer);
        });
        assertThat(fleet.requests()).containsExactly(request("tiered"), request("tiered"));
        assertThat(reasons())
                .containsOnlyOnce("RestoreHolding", "RestoreHeld", "RestoreResyncing", "RestoreWarming", "Restored");
        assertThat(spec("rs").restore.step)
                .as("the operator never writes the spec")
                .isEqualTo(RestoreStep.RESYNC);
    }

    @Test
    void aFailedHoldCarriesTheDataPlanesCauseAndRunsAgainOnceItsJobIsDeleted() {
        ModeController fleet = modes.controller(ns, "fail");
        createReady("fail", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitPhase("fail", "Tiered");
        edit("fail", c -> c.getSpec().restore = new RestoreSpec("r1", RestoreStep.HOLD));
        String hold = OperationJobs.restoreJob(new ClusterLayout("fail", ns), "r1", RestoreStep.HOLD);
        Job first = await().atMost(WAIT).until(() -> job(hold), Objects::nonNull);

        fail(
                hold,
                "restore-sync: phase Restoring (epoch 4): tiered collections refuse reads and writes, retryably\n"
                        + "restore-sync: refused: not every proxy acknowledged phase Restoring within the timeout\n");
        awaitStored("fail", c -> {
            assertThat(c.getStatus().restore.state).isEqualTo("Failed");
            assertThat(condition(c, ConditionType.Restoring).getStatus())
                    .as("the fleet may be held")
                    .isEqualTo("True");
            assertThat(condition(c, ConditionType.Restoring).getReason()).isEqualTo("RestoreFailed");
            assertThat(condition(c, ConditionType.Restoring).getMessage())
                    .contains("not every proxy acknowledged phase Restoring")
                    .contains("delete the Job");
        });
        assertThat(client.v1().events().inNamespace(ns).list().getItems())
                .filteredOn(e -> "RestoreFailed".equals(e.getReason()))
                .singleElement()
                .satisfies(e -> assertThat(e.getType()).isEqualTo("Warning"));

        client.batch().v1().jobs().inNamespace(ns).withName(hold).delete();
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(job(hold).getMetadata().getUid())
                    .isNotEqualTo(first.getMetadata().getUid());
            assertThat(stored("fail").getStatus().restore.state).isEqualTo("Holding");
        });
        assertThat(fleet.requests()).containsExactly(request("tiered"));
    }

    @Test
    void aResyncOfAFleetThatWasNeverHeldIsRefusedWithoutAJob() {
        modes.controller(ns, "early");
        createReady("early", c -> c.getSpec().mode = ClusterMode.TIERED);
        awaitPhase("early", "Tiered");
        edit("early", c -> c.getSpec().restore = new RestoreSpec("r1", RestoreStep.RESYNC));
        // the reconcile that reports the refusal is the one that would have created the Job
        awaitRestore("early", "Failed", "True", "RestoreFailed");
        assertThat(condition("early", ConditionType.Restoring).getMessage())
                .contains("not held for a restore")
                .contains("step: hold BEFORE restoring the archive");
        assertThat(job(OperationJobs.restoreJob(new ClusterLayout("early", ns), "r1", RestoreStep.RESYNC)))
                .isNull();
    }

    /** The fast tier's NetworkPolicy admits the Job's pods: one of its peers selects their labels. */
    private void assertReachesTheFastTier(String cluster, Job job) {
        var labels = job.getSpec().getTemplate().getMetadata().getLabels();
        var policy = await().atMost(WAIT)
                .until(
                        () -> client.network()
                                .v1()
                                .networkPolicies()
                                .inNamespace(ns)
                                .withName(cluster + "-fast")
                                .get(),
                        Objects::nonNull);
        assertThat(policy.getSpec().getIngress().get(0).getFrom())
                .as(
                        "a peer of %s-fast selects the pods of Job %s",
                        cluster, job.getMetadata().getName())
                .anySatisfy(peer -> {
                    assertThat(peer.getNamespaceSelector()).isNull();
                    assertThat(labels)
                            .containsAllEntriesOf(peer.getPodSelector().getMatchLabels());
                });
    }

    /** Plays the Job controller: the pod's container ended with {@code message} as its termination message, then the Job. */
    private void finish(String job, int exitCode, String message) {
        String pod = job + "-" + UUID.randomUUID().toString().substring(0, 5);
        client.pods()
                .inNamespace(ns)
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName(pod)
                        .addToLabels("job-name", job)
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("run")
                        .withImage("x")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();
        client.pods().inNamespace(ns).withName(pod).editStatus(p -> {
            p.setStatus(new PodStatusBuilder()
                    .withPhase(exitCode == 0 ? "Succeeded" : "Failed")
                    .addNewContainerStatus()
                    .withName("run")
                    .withNewState()
                    .withNewTerminated()
                    .withExitCode(exitCode)
                    .withMessage(message)
                    .withFinishedAt(Instant.now().toString())
                    .endTerminated()
                    .endState()
                    .endContainerStatus()
                    .build());
            return p;
        });
        client.batch().v1().jobs().inNamespace(ns).withName(job).editStatus(j -> {
            j.setStatus(new JobStatusBuilder()
                    .addNewCondition()
                    .withType(exitCode == 0 ? "Complete" : "Failed")
                    .withStatus("True")
                    .withReason(exitCode == 0 ? null : "BackoffLimitExceeded")
                    .endCondition()
                    .withSucceeded(exitCode == 0 ? 1 : 0)
                    .withFailed(exitCode == 0 ? 0 : 1)
                    .build());
            return j;
        });
    }

    /** A step that failed: with terminationMessagePolicy FallbackToLogsOnError, its message is the log's tail. */
    private void fail(String job, String logTail) {
        finish(job, 1, logTail);
    }

    private void awaitRestore(String name, String state, String restoring, String reason) {
        awaitStored(name, c -> {
            assertThat(c.getStatus().restore.state).isEqualTo(state);
            assertThat(condition(c, ConditionType.Restoring).getStatus()).isEqualTo(restoring);
            assertThat(condition(c, ConditionType.Restoring).getReason()).isEqualTo(reason);
        });
    }

    private void awaitPhase(String name, String phase) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(stored(name).getStatus().mode.phase).isEqualTo(phase));
    }

    private static Document request(String mode) {
        return new Document("requested", mode).append("override", false).append("requestedBy", "operator");
    }

    private io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec spec(String name) {
        return stored(name).getSpec();
    }

    private Job job(String name) {
        return client.batch().v1().jobs().inNamespace(ns).withName(name).get();
    }
}
