package io.thermocline.tiering.feeder;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.WeakHashMap;

/** The feeder's Prometheus metrics; lag is also written into the checkpoint for the operator. */
public final class FeederMetrics {

    final Gauge lagSeconds;
    final Gauge pendingEvents;
    final Gauge mirroredThroughSeconds;
    final Counter events;
    final Counter archiveWrites;
    final Counter batches;
    final Gauge deadLetters;
    final Counter deadLettered;
    final Counter historyLost;
    final Gauge resyncing;
    final Gauge archiveTrouble;
    /** Where a mirrored write's lag goes, per batch that wrote the archive (docs/benchmarks/read-barrier.md). */
    final Histogram batchPhases;

    private static final Map<PrometheusRegistry, FeederMetrics> BY_REGISTRY = new WeakHashMap<>();

    /** One set per registry: a feeder restarted in the same process reuses it. */
    public static synchronized FeederMetrics in(PrometheusRegistry registry) {
        return BY_REGISTRY.computeIfAbsent(registry, FeederMetrics::new);
    }

    private FeederMetrics(PrometheusRegistry registry) {
        lagSeconds = Gauge.builder()
                .name("thermocline_feeder_lag_seconds")
                .help("Age of the oldest fast-tier write not yet acknowledged by the archive (0 when caught up)")
                .register(registry);
        pendingEvents = Gauge.builder()
                .name("thermocline_feeder_pending_events")
                .help("Change events received from the fast tier and not yet mirrored")
                .register(registry);
        mirroredThroughSeconds = Gauge.builder()
                .name("thermocline_feeder_mirrored_through_seconds")
                .help("Fast-tier cluster time (seconds part) up to which the archive holds every write")
                .register(registry);
        events = Counter.builder()
                .withoutExemplars()
                .name("thermocline_feeder_events_total")
                .help(
                        "Change events by outcome: mirrored, coalesced (superseded in a batch), own (Thermocline's writes), ignored")
                .labelNames("outcome")
                .register(registry);
        archiveWrites = Counter.builder()
                .withoutExemplars()
                .name("thermocline_feeder_archive_writes_total")
                .help("Writes sent to the archive, by kind (upsert, delete)")
                .labelNames("kind")
                .register(registry);
        batches = Counter.builder()
                .withoutExemplars()
                .name("thermocline_feeder_batches_total")
                .help("Batches mirrored and checkpointed")
                .register(registry);
        deadLetters = Gauge.builder()
                .name("thermocline_feeder_dead_letters")
                .help(
                        "Mirror writes the archive refused for good, waiting in thermocline.deadLetters (the fast tier holds those documents; see docs/tiering-workers.md)")
                .register(registry);
        deadLettered = Counter.builder()
                .withoutExemplars()
                .name("thermocline_feeder_dead_lettered_total")
                .help("Mirror writes set aside as dead letters")
                .register(registry);
        historyLost = Counter.builder()
                .withoutExemplars()
                .name("thermocline_feeder_history_lost_total")
                .help(
                        "Times the fast tier's oplog no longer held the feeder's resume point (code 286), each followed by a resync")
                .register(registry);
        resyncing = Gauge.builder()
                .name("thermocline_feeder_resyncing")
                .help("1 while the feeder resyncs the archive from the fast tier after lost change-stream history")
                .register(registry);
        archiveTrouble = Gauge.builder()
                .name("thermocline_feeder_archive_unavailable")
                .help(
                        "1 while the archive takes no mirror write, by why (unreachable, stalled, refusing_writes): the fast tier keeps the writes and the feeder retries")
                .labelNames("why")
                .register(registry);
        batchPhases = Histogram.builder()
                .withoutExemplars()
                .name("thermocline_feeder_batch_phase_seconds")
                .help(
                        "Per batch written to the archive: queued (its first event's arrival at the feeder to the start of"
                                + " its archive writes), archive (the writes, acknowledged with majority), checkpoint (the archive's"
                                + " acknowledgement to its mirrored-through persisted)")
                .labelNames("phase")
                .classicOnly()
                .classicUpperBounds(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
                .register(registry);
        for (ArchiveTrouble.Kind kind : ArchiveTrouble.Kind.values()) {
            archiveTrouble.labelValues(kind.label).set(0);
        }
    }
}
