package io.thermocline.operator.tiering;

import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;

/** Eviction passes on a schedule; never two at once (Forbid); suspended while paused. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class EvictorCronJobDependent extends ClusterDependent<CronJob> {

    public static final String COMPONENT = "evictor";

    public EvictorCronJobDependent() {
        super(CronJob.class);
    }

    @Override
    protected CronJob desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        var evictor = DataPlaneContainer.withMetrics(DataPlaneContainer.container(desired, "evictor", desired.spec().evictor.resources)).build();
        return new CronJobBuilder()
                .withMetadata(metadata(desired, layout.evictor(), COMPONENT))
                .withNewSpec()
                .withSchedule(desired.spec().evictor.schedule)
                .withSuspend(desired.paused())
                .withConcurrencyPolicy("Forbid")
                .withSuccessfulJobsHistoryLimit(1)
                .withFailedJobsHistoryLimit(3)
                .withNewJobTemplate()
                .withNewMetadata().withLabels(layout.labels(COMPONENT)).endMetadata()
                .withNewSpec()
                .withBackoffLimit(2)
                .withNewTemplate()
                .withNewMetadata().withLabels(layout.labels(COMPONENT)).endMetadata()
                .withSpec(DataPlaneContainer.podSpec(desired, evictor, desired.spec().evictor, COMPONENT).withRestartPolicy("OnFailure").build())
                .endTemplate()
                .endSpec()
                .endJobTemplate()
                .endSpec()
                .build();
    }
}
