package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.fasttier.FastTierPods;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyHealth;
import io.thermocline.operator.proxy.ProxyPods;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.ClusterHealth.Replicas;
import io.thermocline.operator.tiering.TieringPolling;
import java.util.List;

/**
 * A cluster's secondary resources as the informer caches hold them (JOSDK keeps what this operator just wrote in them
 * too), and what the report reads of them.
 */
final class Secondaries {

    private Secondaries() {}

    /** A secondary resource of this cluster by name (several event sources may hold a kind); null when absent. */
    static <R extends HasMetadata> R named(Context<ThermoclineCluster> context, Class<R> kind, String name) {
        return context.getSecondaryResourcesAsStream(kind)
                .filter(r -> r.getMetadata().getName().equals(name))
                .findFirst()
                .orElse(null);
    }

    /**
     * The workloads after the workflow, the tiering progress from the poller's cache (no MongoDB call here: read
     * whatever the replica set's step, since a member being added or restarted does not make the feeder's lag or dead
     * letters go away) and the warmer Job {@code warmerJob} (null: none is wanted).
     */
    static StatusReport.Seen seen(
            Context<ThermoclineCluster> context,
            ClusterLayout layout,
            ThermoclineClusterSpec spec,
            ProxyHealth proxyHealth,
            String warmerJob) {
        StatefulSet statefulSet = named(context, StatefulSet.class, layout.fastTier());
        Replicas fastTier = statefulSet == null ? null : new Replicas(spec.fastTier.members, readyOf(statefulSet));
        Replicas proxy = replicas(named(context, Deployment.class, layout.proxy()), spec.proxy.replicas);
        if (proxy != null && !spec.paused && proxy.ready() < proxy.desired()) {
            proxy = proxy.withNotReadyCause(ProxyPods.notReadyCause(context.getClient(), layout, proxyHealth));
        }
        Replicas feeder = replicas(named(context, Deployment.class, layout.feeder()), 1);
        return new StatusReport.Seen(
                fastTier,
                statefulSet == null ? null : FastTierPods.upToDate(context.getClient(), layout, statefulSet),
                proxy,
                feeder,
                TieringPolling.cached(context),
                warmerJob == null ? null : warmer(context, warmerJob));
    }

    private static Replicas replicas(Deployment deployment, int desired) {
        if (deployment == null) {
            return null;
        }
        Integer ready =
                deployment.getStatus() == null ? null : deployment.getStatus().getReadyReplicas();
        return new Replicas(desired, ready == null ? 0 : ready);
    }

    private static int readyOf(StatefulSet statefulSet) {
        Integer ready =
                statefulSet.getStatus() == null ? null : statefulSet.getStatus().getReadyReplicas();
        return ready == null ? 0 : ready;
    }

    /** The current warmer Job: how it ended, null while it runs; null before it exists. */
    private static ClusterHealth.Warmer warmer(Context<ThermoclineCluster> context, String name) {
        Job job = named(context, Job.class, name);
        if (job == null) {
            return null;
        }
        List<JobCondition> conditions =
                job.getStatus() == null || job.getStatus().getConditions() == null
                        ? List.of()
                        : job.getStatus().getConditions();
        boolean complete =
                conditions.stream().anyMatch(c -> "Complete".equals(c.getType()) && "True".equals(c.getStatus()));
        String failure = conditions.stream()
                .filter(c -> "Failed".equals(c.getType()) && "True".equals(c.getStatus()))
                .map(c -> c.getReason() + (c.getMessage() == null ? "" : ": " + c.getMessage()))
                .findFirst()
                .orElse(null);
        return new ClusterHealth.Warmer(name, complete, failure);
    }
}
