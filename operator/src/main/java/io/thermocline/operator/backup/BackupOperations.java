package io.thermocline.operator.backup;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.BackupPointStatus;
import io.thermocline.operator.api.v1alpha1.RestoreStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import io.thermocline.operator.status.TransitionEvents;
import io.thermocline.operator.workflow.DesiredCluster;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * spec.backupPoint and spec.restore of one reconcile: {@link #plan} decides from the Jobs in the informer cache (before
 * the workflow, since the warmer Job is named after the last resynced restore), {@link #act} starts the Jobs decided on
 * (only with a deployed workflow: their pods need its config and Secrets) and sends one Event per step.
 */
public final class BackupOperations {

    /** What this reconcile reports and does for backup points and restores. */
    public record Plan(
            BackupPointSteps.Step point, RestoreSteps.Step restore, String pointJob, int pointTimeoutSeconds) {

        public BackupPointStatus pointStatus() {
            return point.status();
        }

        public RestoreStatus restoreStatus() {
            return restore.status();
        }

        /** The conditions to report: only those of an operation ever asked for. */
        public List<Observed> conditions() {
            List<Observed> conditions = new ArrayList<>();
            if (point.condition() != null) {
                conditions.add(point.condition());
            }
            if (restore.condition() != null) {
                conditions.add(restore.condition());
            }
            return conditions;
        }
    }

    private BackupOperations() {}

    /**
     * {@code warmerNames}: the warmer Job's name after a given restore; {@code fleetRestoring}: the mode document was last
     * seen in phase Restoring.
     */
    public static Plan plan(
            Context<ThermoclineCluster> context,
            ThermoclineCluster cluster,
            ClusterLayout layout,
            Function<String, String> warmerNames,
            boolean fleetRestoring,
            Instant now) {
        ThermoclineClusterSpec spec = cluster.getSpec();
        var previous = cluster.getStatus();
        String pointJob =
                spec.backupPoint == null ? null : OperationJobs.backupPointJob(layout, spec.backupPoint.request);
        BackupPointSteps.Step point = BackupPointSteps.decide(
                spec.backupPoint,
                previous == null ? null : previous.backupPoint,
                pointJob,
                pointJob == null ? JobRun.ABSENT : OperationJobs.run(context, layout.namespace(), pointJob),
                now);
        RestoreStatus restoreBefore = previous == null ? null : previous.restore;
        String restoreName =
                spec.restore != null ? spec.restore.name : restoreBefore == null ? null : restoreBefore.name;
        RestoreSteps.Jobs jobs = new RestoreSteps.Jobs(
                step -> OperationJobs.restoreJob(layout, restoreName, step),
                step -> OperationJobs.run(
                        context, layout.namespace(), OperationJobs.restoreJob(layout, restoreName, step)),
                warmerNames,
                restore -> OperationJobs.run(context, layout.namespace(), warmerNames.apply(restore)));
        RestoreSteps.Step restore = RestoreSteps.decide(spec.restore, restoreBefore, jobs, fleetRestoring, now);
        return new Plan(point, restore, pointJob, spec.backupPoint == null ? 0 : spec.backupPoint.timeoutSeconds);
    }

    /** Starts what {@code plan} decided ({@code desired} null: the workflow is held, nothing can run), and the Events. */
    public static void act(KubernetesClient client, ThermoclineCluster cluster, Plan plan, DesiredCluster desired) {
        if (desired != null && plan.point().start()) {
            OperationJobs.start(
                    client, cluster, OperationJobs.backupPoint(desired, plan.pointJob(), plan.pointTimeoutSeconds()));
        }
        RestoreStatus restore = plan.restoreStatus();
        if (desired != null && plan.restore().start() != null) {
            OperationJobs.start(
                    client,
                    cluster,
                    OperationJobs.restoreStep(
                            desired,
                            OperationJobs.restoreJob(
                                    desired.layout(),
                                    restore.name,
                                    plan.restore().start()),
                            plan.restore().start()));
        }
        var previous = cluster.getStatus();
        BackupPointStatus pointBefore = previous == null ? null : previous.backupPoint;
        BackupPointStatus point = plan.pointStatus();
        if (point != null
                && (pointBefore == null
                        || !Objects.equals(pointBefore.request, point.request)
                        || !Objects.equals(pointBefore.state, point.state))) {
            Observed c = plan.point().condition();
            TransitionEvents.once(
                    client,
                    cluster,
                    "BackupPoint" + c.reason(),
                    c.message(),
                    !isFailure(c.reason()),
                    "backup-point/" + point.request + "/" + point.state);
        }
        RestoreStatus restoreBefore = previous == null ? null : previous.restore;
        if (restore != null
                && (restoreBefore == null
                        || !Objects.equals(restoreBefore.name, restore.name)
                        || !Objects.equals(restoreBefore.step, restore.step)
                        || !Objects.equals(restoreBefore.state, restore.state))) {
            Observed c = plan.restore().condition();
            TransitionEvents.once(
                    client,
                    cluster,
                    c.reason(),
                    c.message(),
                    !RestoreSteps.RESTORE_FAILED.equals(c.reason()),
                    "restore/" + restore.name + "/" + restore.step + "/" + restore.state);
        }
    }

    /** The conditions whose Events {@link #act} sends, one per step (not one per change of the condition's status). */
    public static boolean reportsOwnEvents(String conditionType) {
        return ConditionType.BackupPointReached.name().equals(conditionType)
                || ConditionType.Restoring.name().equals(conditionType);
    }

    private static boolean isFailure(String reason) {
        return !BackupPointSteps.REACHED.equals(reason) && !BackupPointSteps.RUNNING.equals(reason);
    }
}
