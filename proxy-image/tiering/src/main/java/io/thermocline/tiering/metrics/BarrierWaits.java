package io.thermocline.tiering.metrics;

import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * {@code thermocline_<component>_barrier_wait_seconds{outcome}}: how long a component (proxy,
 * evictor, warmer) waited at a mirror barrier for the feeder, and whether the archive got there
 * ({@code mirrored}) or the wait gave up ({@code timeout}). One name per component, so registries
 * served on one /metrics (the embedded default) never hold the same name twice.
 */
public final class BarrierWaits {

    /** Counts nothing: for barriers nobody scrapes (tests, tools). */
    public static final BarrierWaits NONE = new BarrierWaits(null, null);

    private static final Map<PrometheusRegistry, Map<String, Histogram>> BY_REGISTRY = new WeakHashMap<>();

    private final DistributionDataPoint mirrored;
    private final DistributionDataPoint timedOut;

    private BarrierWaits(DistributionDataPoint mirrored, DistributionDataPoint timedOut) {
        this.mirrored = mirrored;
        this.timedOut = timedOut;
    }

    public static synchronized BarrierWaits in(PrometheusRegistry registry, String component) {
        Histogram histogram = BY_REGISTRY.computeIfAbsent(registry, r -> new HashMap<>()).computeIfAbsent(component, c ->
                Histogram.builder().withoutExemplars()
                        .name("thermocline_" + c + "_barrier_wait_seconds")
                        .help("Time the " + c + " waited for the feeder to mirror up to a barrier, by outcome (mirrored, timeout)")
                        .labelNames("outcome").classicOnly()
                        .classicUpperBounds(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
                        .register(registry));
        return new BarrierWaits(histogram.labelValues("mirrored"), histogram.labelValues("timeout"));
    }

    public void record(long nanos, boolean mirroredInTime) {
        DistributionDataPoint point = mirroredInTime ? mirrored : timedOut;
        if (point != null) {
            point.observe(nanos / 1e9);
        }
    }
}
