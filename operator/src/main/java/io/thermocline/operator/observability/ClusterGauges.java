package io.thermocline.operator.observability;

import io.fabric8.kubernetes.api.model.Condition;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.ModeDocument;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Conditions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the operator observed of each cluster, on its own /q/metrics: document counts per tier
 * (the tier sizes, which no data-plane process counts), the feeder lag it read from the
 * checkpoint, Ready, the mode's phase and the archive follower. A value not observed yet is NaN (Prometheus drops it), not 0.
 */
@ApplicationScoped
public class ClusterGauges {

    public static final String DOCUMENTS = "thermocline.cluster.documents";
    public static final String FEEDER_LAG = "thermocline.cluster.feeder.lag.seconds";
    public static final String READY = "thermocline.cluster.ready";
    /** One series per phase of the fleet's mode (Shadowing ... Drained), 1 for the current one: Grafana shows which. */
    public static final String MODE_PHASE = "thermocline.cluster.mode.phase";

    public static final String FOLLOWER_LAG = "thermocline.cluster.follower.lag.seconds";
    public static final String FOLLOWER_RUNNING = "thermocline.cluster.follower.running";
    static final List<String> PHASES = List.of(
            ModeDocument.PHASE_SHADOWING,
            ModeDocument.PHASE_CUTTING_OVER,
            ModeDocument.PHASE_TIERED,
            ModeDocument.PHASE_DRAINING,
            ModeDocument.PHASE_DRAINED);
    /** Not "namespace": Prometheus gives that label the operator's own namespace, from the scrape target. */
    public static final String NAMESPACE_TAG = "thermocline_namespace";
    /** The same label the ServiceMonitor puts on the data plane's series. */
    public static final String CLUSTER_TAG = ServiceMonitorDependent.CLUSTER_LABEL;

    private record Series(String name, Tags tags) {}

    /** The gauges read these holders; Micrometer keeps only a weak reference to them. */
    private final Map<Series, double[]> values = new ConcurrentHashMap<>();

    private final Map<ClusterLayout, List<Series>> byCluster = new ConcurrentHashMap<>();

    @Inject
    MeterRegistry registry;

    /** Publishes {@code status} as the cluster's current values. */
    public void record(ClusterLayout layout, ThermoclineClusterStatus status) {
        Tags cluster = Tags.of(NAMESPACE_TAG, layout.namespace(), CLUSTER_TAG, layout.cluster());
        ThermoclineClusterStatus.DocumentCounts documents = status.documents;
        set(
                layout,
                DOCUMENTS,
                cluster.and("tier", "fast"),
                documents == null ? null : documents.fastTier,
                "Documents in the fast tier's tiered collections, as the operator last counted them");
        set(
                layout,
                DOCUMENTS,
                cluster.and("tier", "archive"),
                documents == null ? null : documents.archive,
                "Documents in the archive's tiered collections, as the operator last counted them");
        set(
                layout,
                FEEDER_LAG,
                cluster,
                status.feederLagSeconds,
                "Feeder lag the operator last read from the feeder's checkpoint");
        Condition ready = Conditions.find(status.conditions, ConditionType.Ready);
        set(
                layout,
                READY,
                cluster,
                ready == null ? null : ("True".equals(ready.getStatus()) ? 1L : 0L),
                "1 when the cluster's Ready condition is True");
        ModeStatus mode = status.mode;
        for (String phase : PHASES) {
            set(
                    layout,
                    MODE_PHASE,
                    cluster.and("phase", phase),
                    mode == null || mode.phase == null ? null : phase.equals(mode.phase) ? 1L : 0L,
                    "1 for the phase the fleet's mode is in (status.mode.phase), 0 for the others");
        }
        ModeStatus.Follower follower = mode == null ? null : mode.follower;
        set(
                layout,
                FOLLOWER_LAG,
                cluster,
                follower == null ? null : follower.lagSeconds,
                "Seconds the archive follower is behind the archive's latest optime (only while the archive is authoritative)");
        set(
                layout,
                FOLLOWER_RUNNING,
                cluster,
                follower == null || follower.running == null ? null : follower.running ? 1L : 0L,
                "1 while a feeder process holds the archive follower's lease (only while the archive is authoritative)");
    }

    /** Removes a deleted cluster's series. */
    public void forget(ClusterLayout layout) {
        List<Series> series = byCluster.remove(layout);
        if (series != null) {
            series.forEach(s -> {
                registry.find(s.name()).tags(s.tags()).meters().forEach(registry::remove);
                values.remove(s);
            });
        }
    }

    private void set(ClusterLayout layout, String name, Tags tags, Long value, String help) {
        Series series = new Series(name, tags);
        double[] holder = values.computeIfAbsent(series, s -> {
            double[] h = {Double.NaN};
            Gauge.builder(name, h, v -> v[0])
                    .tags(tags)
                    .description(help)
                    .strongReference(true)
                    .register(registry);
            byCluster.computeIfAbsent(layout, l -> new CopyOnWriteArrayList<>()).add(s);
            return h;
        });
        holder[0] = value == null ? Double.NaN : value;
    }
}
