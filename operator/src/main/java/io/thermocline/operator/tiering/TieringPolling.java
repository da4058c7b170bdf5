package io.thermocline.operator.tiering;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.ResourceIDMapper;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.polling.PerResourcePollingConfigurationBuilder;
import io.javaoperatorsdk.operator.processing.event.source.polling.PerResourcePollingEventSource;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.archive.ReferencedSecrets;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.layout.ClusterLayout;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The tiering progress (feeder lag, drained, tier sizes, warnings) as a polling event source:
 * {@link TieringObserver} runs on JOSDK's poller thread every {@code period} for each cluster whose
 * replica set is initiated, never on the reconcile thread; a changed snapshot reconciles the cluster, and
 * the reconcile reads the last one from the source's cache.
 */
public final class TieringPolling {

    public static final String NAME = "tiering";

    private TieringPolling() {
    }

    public static PerResourcePollingEventSource<TieringSnapshot, ThermoclineCluster, String> eventSource(
            EventSourceContext<ThermoclineCluster> context, ReferencedSecrets archiveSecrets,
            TieringObserver observer, Duration period) {
        PerResourcePollingEventSource.ResourceFetcher<TieringSnapshot, ThermoclineCluster> fetcher = cluster -> {
            if (!replicaSetInitiated(cluster)) {
                return Set.of();
            }
            String ns = cluster.getMetadata().getNamespace();
            ArchiveSecrets.Lookup lookup = name -> archiveSecrets.find(ns, name);
            return target(cluster, ArchiveSecrets.read(lookup, ns, cluster.getSpec().archive),
                    ArchiveSecrets.direct(context.getClient(), ns).find(ClusterLayout.of(cluster).usersSecret()))
                    .flatMap(observer::observe).map(Set::of).orElse(Set.of());
        };
        return new PerResourcePollingEventSource<>(TieringSnapshot.class, context,
                new PerResourcePollingConfigurationBuilder<TieringSnapshot, ThermoclineCluster, String>(fetcher, period)
                        .withName(NAME)
                        .withResourceIDMapper(ResourceIDMapper.singleResourceResourceIDMapper())
                        .build());
    }

    /** The last snapshot the poller took for this cluster; null before the first. */
    public static TieringSnapshot cached(Context<ThermoclineCluster> context) {
        return context.getSecondaryResource(TieringSnapshot.class, NAME).orElse(null);
    }

    /** What the observer connects to: the data plane's fast-tier user and the archive; empty while a Secret is missing. */
    public static Optional<TieringTarget> target(ThermoclineCluster cluster, ArchiveSecrets.Access archive, Secret users) {
        ThermoclineClusterSpec spec = cluster.getSpec();
        Map<String, String> credentials = UsersSecretDependent.decoded(users);
        String fastUri = UsersSecretDependent.fastTierUri(ClusterLayout.of(cluster), spec.fastTier.members, credentials);
        if (!(archive instanceof ArchiveSecrets.Found found) || fastUri == null) {
            return Optional.empty();
        }
        return Optional.of(new TieringTarget(fastUri, found.connection().uri(),
                spec.collections.stream().map(c -> c.database + "." + c.collection).toList()));
    }

    /** Polled from initiation on, not only while every member is ready: lag and dead letters matter most during a roll. */
    private static boolean replicaSetInitiated(ThermoclineCluster cluster) {
        return cluster.getStatus() != null && Boolean.TRUE.equals(cluster.getStatus().replicaSetInitiated);
    }
}
