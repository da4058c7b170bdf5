package io.thermocline.proxy.tiered;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.proxy.causal.ArchivePresent;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.mode.Modes;
import io.thermocline.proxy.tiered.writes.Promotion;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.provenance.CopyUp;

/**
 * The tiered layer's gauges and counters read at each scrape from the parts that count (the mode's phase and epoch,
 * the read barrier, the copy-up barrier, the archive-present pings); {@link RoutingMetrics} counts the decisions.
 */
final class TieredGauges {

    private TieredGauges() {}

    static void register(
            PrometheusRegistry registry,
            Modes modes,
            ReadBarrier barrier,
            Promotion promotion,
            ArchivePresent archivePresent) {
        GaugeWithCallback.builder()
                .name("thermocline_mode_phase")
                .help(
                        "1 for the fleet's phase as this proxy routes by it (Shadowing, CuttingOver, Tiered, Draining, Drained), 0 for the others")
                .labelNames("phase")
                .callback(cb -> {
                    Phase now = modes.gate().view().document().phase();
                    for (Phase p : Phase.values()) {
                        cb.call(p == now ? 1 : 0, p.documentName());
                    }
                })
                .register(registry);
        GaugeWithCallback.builder()
                .name("thermocline_mode_epoch")
                .help("The epoch of the mode document this proxy routes by (it rises with every phase change)")
                .callback(cb -> cb.call(modes.gate().view().document().epoch()))
                .register(registry);
        String mode = barrier.mode().configName();
        CounterWithCallback.builder()
                .name("thermocline_proxy_read_barrier_total")
                .help(
                        "Archive-routed reads by how they passed the read barrier: no_wait (causal point already mirrored),"
                                + " probed (a fast-tier probe, then already mirrored), waited (waited for the feeder), timed_out,"
                                + " skipped (point reads of documents absent from the fast tier and never fenced: nothing to wait for),"
                                + " quiet (linearizable reads whose namespaces had no write the feeder had not mirrored: no probe, no wait),"
                                + " speculated (quiet linearizable reads whose archive answer, asked while the fast tier's present was"
                                + " read, was kept)")
                .labelNames("mode", "outcome")
                .callback(cb -> {
                    ReadBarrier.Counts c = barrier.counts();
                    cb.call(c.immediate(), mode, "no_wait");
                    cb.call(c.probed(), mode, "probed");
                    cb.call(c.waitedForFeeder(), mode, "waited");
                    cb.call(c.timedOut(), mode, "timed_out");
                    cb.call(c.skipped(), mode, "skipped");
                    cb.call(c.quiet(), mode, "quiet");
                    cb.call(c.speculated(), mode, "speculated");
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("thermocline_proxy_read_barrier_speculations_dropped_total")
                .help(
                        "Archive answers asked while the fast tier's present was read and dropped: the stream showed a write"
                                + " the answer may miss, or could not tell (the read then passed the barrier as counted in"
                                + " thermocline_proxy_read_barrier_total and asked the archive again)")
                .callback(cb -> cb.call(barrier.counts().speculationsDropped()))
                .register(registry);
        CounterWithCallback.builder()
                .name("thermocline_proxy_copy_up_barrier_total")
                .help(
                        "Promotions (copy-ups from the archive) by how they passed the sync barrier: skipped (documents no fence"
                                + " names: nothing to wait for), waited (fenced documents, after the barrier), timed_out (fenced"
                                + " documents not copied: the feeder was behind), left (fenced documents a read-through promotion left out)")
                .labelNames("outcome")
                .callback(cb -> {
                    CopyUp.BarrierCounts c = promotion.barrierCounts();
                    cb.call(c.skipped(), "skipped");
                    cb.call(c.waited(), "waited");
                    cb.call(c.timedOut(), "timed_out");
                    cb.call(c.left(), "left");
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("thermocline_proxy_archive_present_pings_total")
                .help("Pings to the archive's primary reading its present for reads allowed on secondaries"
                        + " (none while the archive has no secondary a primary-accepting read could go to)")
                .callback(cb -> cb.call(archivePresent.pings()))
                .register(registry);
    }
}
