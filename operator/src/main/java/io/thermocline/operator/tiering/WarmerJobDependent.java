package io.thermocline.operator.tiering;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.Objects;

/**
 * One warming run per set of windows: the Job's name carries the windows' hash, so a grown
 * window gets a new Job. A Job's pod template is immutable, so only {@code suspend}
 * (pause) is ever updated in place.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class WarmerJobDependent extends ClusterDependent<Job> {

    public static final String COMPONENT = "warmer";

    public WarmerJobDependent() {
        super(Job.class);
    }

    @Override
    protected Job desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        var warmer = DataPlaneContainer.withMetrics(DataPlaneContainer.container(desired, "warmer", desired.spec().warmer.resources)).build();
        return new JobBuilder()
                .withMetadata(metadata(desired, desired.warmerJobName(), COMPONENT))
                .withNewSpec()
                .withSuspend(desired.paused())
                .withBackoffLimit(6)
                .withNewTemplate()
                .withNewMetadata().withLabels(layout.labels(COMPONENT)).endMetadata()
                .withSpec(DataPlaneContainer.podSpec(desired, warmer, desired.spec().warmer, COMPONENT).withRestartPolicy("OnFailure").build())
                .endTemplate()
                .endSpec()
                .build();
    }

    @Override
    public Matcher.Result<Job> match(Job actual, Job desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return Matcher.Result.computed(Objects.equals(actual.getSpec().getSuspend(), desired.getSpec().getSuspend()), desired);
    }

    @Override
    public Job update(Job actual, Job desired, ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        return context.getClient().batch().v1().jobs()
                .inNamespace(actual.getMetadata().getNamespace())
                .withName(actual.getMetadata().getName())
                .edit(job -> {
                    job.getSpec().setSuspend(desired.getSpec().getSuspend());
                    return job;
                });
    }
}
