package io.thermocline.tiering.mode;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.WeakHashMap;

/** The archive follower's Prometheus metrics; the last resync is also in its document, for {@code thermocline status}. */
final class FollowerMetrics {

    final Counter applied;
    final Counter resyncs;
    final Gauge resyncing;
    final Counter deposed;
    final Gauge leader;

    private static final Map<PrometheusRegistry, FollowerMetrics> BY_REGISTRY = new WeakHashMap<>();

    /** One set per registry: a follower restarted in the same process reuses it. */
    static synchronized FollowerMetrics in(PrometheusRegistry registry) {
        return BY_REGISTRY.computeIfAbsent(registry, FollowerMetrics::new);
    }

    private FollowerMetrics(PrometheusRegistry registry) {
        applied = Counter.builder().withoutExemplars().name("thermocline_follower_applied_total")
                .help("Archive change events applied to the fast tier by the archive follower")
                .register(registry);
        resyncs = Counter.builder().withoutExemplars().name("thermocline_follower_resyncs_total")
                .help("Times the archive's oplog no longer held the follower's resume point (code 286), each followed by a resync")
                .register(registry);
        resyncing = Gauge.builder().name("thermocline_follower_resyncing")
                .help("1 while the archive follower resyncs the fast tier from the archive after lost change-stream history")
                .register(registry);
        deposed = Counter.builder().withoutExemplars().name("thermocline_follower_deposed_total")
                .help("Follower writes refused because another instance took the follower's lease (a newer term)")
                .register(registry);
        leader = Gauge.builder().name("thermocline_follower_leader")
                .help("1 while this instance holds the archive follower's lease")
                .register(registry);
    }
}
