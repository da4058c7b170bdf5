package io.thermocline.operator.backup;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.RestoreStep;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.jboss.logging.Logger;

/**
 * The Jobs that run the data plane's one-shot commands for a cluster: {@code thermocline backup-point --json} and
 * {@code thermocline restore-sync}. They carry the managed label and the cluster as controlling owner, so the warmer's
 * Job informer sees them and a change of their status reconciles the cluster. A result is read from the Job's pod's
 * termination message: the backup point's JSON document, or the last lines of the log of a step that failed.
 */
public final class OperationJobs {

    public static final String BACKUP_POINT_COMPONENT = ClusterLayout.BACKUP_POINT_COMPONENT;
    public static final String RESTORE_COMPONENT = ClusterLayout.RESTORE_COMPONENT;
    /** The label the Job controller puts on a Job's pods. */
    static final String JOB_NAME_LABEL = "job-name";

    private static final Logger LOG = Logger.getLogger(OperationJobs.class);
    private static final int ALREADY_EXISTS = 409;

    private OperationJobs() {}

    /** {@code NAME-backup-HASH}: at most 60 characters for the longest cluster name. */
    public static String backupPointJob(ClusterLayout layout, String request) {
        return layout.cluster() + "-backup-" + ContentHash.of(request).substring(0, 8);
    }

    /** {@code NAME-rs-STEP-HASH}: at most 63 characters (a Job's name is a label value on its pods). */
    public static String restoreJob(ClusterLayout layout, String restore, RestoreStep step) {
        return layout.cluster() + "-rs-" + step.value() + "-"
                + ContentHash.of(restore).substring(0, 8);
    }

    /**
     * {@code thermocline backup-point --json}, its one JSON document also written as the termination message (read back by
     * the operator); no retry: a new point is a new request.
     */
    public static Job backupPoint(DesiredCluster desired, String name, int timeoutSeconds) {
        String run = "thermocline backup-point --config " + config() + " --json --timeout " + timeoutSeconds
                + " > /dev/termination-log; rc=$?; cat /dev/termination-log; exit $rc";
        return job(
                desired,
                name,
                BACKUP_POINT_COMPONENT,
                "backup-point",
                List.of("sh", "-c", run),
                0,
                timeoutSeconds + 300L);
    }

    /** {@code thermocline restore-sync [--hold | --cancel]}; each is safe to run again, so a failed pod is retried twice. */
    public static Job restoreStep(DesiredCluster desired, String name, RestoreStep step) {
        List<String> command = switch (step) {
            case HOLD -> List.of("thermocline", "restore-sync", "--hold", "--config", config());
            case RESYNC -> List.of("thermocline", "restore-sync", "--config", config());
            case CANCEL -> List.of("thermocline", "restore-sync", "--cancel", "--config", config());
        };
        return job(desired, name, RESTORE_COMPONENT, "restore-sync", command, 2, null);
    }

    private static Job job(
            DesiredCluster desired,
            String name,
            String component,
            String container,
            List<String> command,
            int backoffLimit,
            Long deadlineSeconds) {
        var built = DataPlaneContainer.operation(desired, container, command, desired.spec().warmer.resources)
                .withTerminationMessagePolicy("FallbackToLogsOnError")
                .build();
        return new JobBuilder()
                .withMetadata(ClusterDependent.metadata(desired, name, component))
                .withNewSpec()
                .withBackoffLimit(backoffLimit)
                .withActiveDeadlineSeconds(deadlineSeconds)
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(desired.layout().labels(component))
                .endMetadata()
                .withSpec(DataPlaneContainer.operationPodSpec(desired, built, desired.spec().warmer, component)
                        .withRestartPolicy("Never")
                        .build())
                .endTemplate()
                .endSpec()
                .build();
    }

    /** Creates {@code job} owned by {@code cluster}; one that exists already (a reconcile before saw it created) is left. */
    public static void start(KubernetesClient client, ThermoclineCluster cluster, Job job) {
        job.getMetadata()
                .setOwnerReferences(List.of(new OwnerReferenceBuilder()
                        .withApiVersion(cluster.getApiVersion())
                        .withKind(cluster.getKind())
                        .withName(cluster.getMetadata().getName())
                        .withUid(cluster.getMetadata().getUid())
                        .withController(true)
                        .withBlockOwnerDeletion(true)
                        .build()));
        try {
            client.batch()
                    .v1()
                    .jobs()
                    .inNamespace(job.getMetadata().getNamespace())
                    .resource(job)
                    .create();
            LOG.infof(
                    "event=operation-started cluster=%s/%s job=%s",
                    cluster.getMetadata().getNamespace(),
                    cluster.getMetadata().getName(),
                    job.getMetadata().getName());
        } catch (KubernetesClientException e) {
            if (e.getCode() != ALREADY_EXISTS) {
                throw e;
            }
        }
    }

    /** How the Job named {@code name} stands, from the informer cache; a finished one's output from its pods. */
    public static JobRun run(Context<ThermoclineCluster> context, String namespace, String name) {
        Job job = context.getSecondaryResourcesAsStream(Job.class)
                .filter(j -> j.getMetadata().getName().equals(name))
                .findFirst()
                .orElse(null);
        if (job == null) {
            return JobRun.ABSENT;
        }
        List<JobCondition> conditions =
                job.getStatus() == null || job.getStatus().getConditions() == null
                        ? List.of()
                        : job.getStatus().getConditions();
        JobCondition failed = conditions.stream()
                .filter(c -> "Failed".equals(c.getType()) && "True".equals(c.getStatus()))
                .findFirst()
                .orElse(null);
        boolean complete =
                conditions.stream().anyMatch(c -> "Complete".equals(c.getType()) && "True".equals(c.getStatus()));
        if (!complete && failed == null) {
            return JobRun.RUNNING;
        }
        String output = output(context.getClient(), namespace, name, complete ? 0 : null);
        if (complete) {
            return new JobRun.Succeeded(output);
        }
        return new JobRun.Failed(
                output != null
                        ? output
                        : failed.getReason() + (failed.getMessage() == null ? "" : ": " + failed.getMessage()));
    }

    /** The termination message of the Job's last terminated container ({@code exitCode}: only one that exited so). */
    private static String output(KubernetesClient client, String namespace, String job, Integer exitCode) {
        List<Pod> pods = client.pods()
                .inNamespace(namespace)
                .withLabel(JOB_NAME_LABEL, job)
                .list()
                .getItems();
        return pods.stream()
                .filter(p -> p.getStatus() != null && p.getStatus().getContainerStatuses() != null)
                .flatMap(p -> p.getStatus().getContainerStatuses().stream())
                .map(ContainerStatus::getState)
                .filter(s -> s != null && s.getTerminated() != null)
                .map(s -> s.getTerminated())
                .filter(t -> exitCode == null || Objects.equals(exitCode, t.getExitCode()))
                .filter(t -> t.getMessage() != null && !t.getMessage().isBlank())
                .max(Comparator.comparing(t -> String.valueOf(t.getFinishedAt())))
                .map(ContainerStateTerminated::getMessage)
                .orElse(null);
    }

    private static String config() {
        return ClusterLayout.CONFIG_DIR + "/" + ClusterLayout.CONFIG_FILE;
    }
}
