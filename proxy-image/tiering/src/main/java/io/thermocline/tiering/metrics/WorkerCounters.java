package io.thermocline.tiering.metrics;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The per-document outcome counters of the evictor and the warmer, registered once per registry
 * so a worker restarted in the same process (the embedded default, tests) reuses them.
 */
public final class WorkerCounters {

    private static final Map<PrometheusRegistry, Map<String, Counter>> BY_REGISTRY = new WeakHashMap<>();
    private static final Map<PrometheusRegistry, Gauge> FENCES = new WeakHashMap<>();

    private WorkerCounters() {
    }

    /** {@code thermocline_<worker>_documents_total{namespace, outcome}}. */
    public static synchronized Counter documents(PrometheusRegistry registry, String worker, String help) {
        return BY_REGISTRY.computeIfAbsent(registry, r -> new HashMap<>()).computeIfAbsent(worker, w ->
                Counter.builder().withoutExemplars().name("thermocline_" + w + "_documents_total").help(help)
                        .labelNames("namespace", "outcome").register(registry));
    }

    /** {@code thermocline_fences{kind}}: the fast tier's fences by kind, counted at each evictor pass. */
    public static synchronized Gauge fences(PrometheusRegistry registry) {
        return FENCES.computeIfAbsent(registry, r -> Gauge.builder().name("thermocline_fences")
                .help("Fences in the fast tier's thermocline.fences by kind, counted at each evictor pass (CLAIM: placeholders"
                        + " a claim left committed, which no version leaves now; the pass removes them)")
                .labelNames("kind").register(registry));
    }
}
