package io.thermocline.tiering.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metrics.BarrierWaits;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The barrier's waits reach /metrics: a wait with no feeder times out, one with a feeder is mirrored. */
@Timeout(60)
class MirrorBarrierWaitsTest {

    @Test
    void waitsAreCountedByOutcome() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        try (TwoTiers tiers = new TwoTiers()) {
            MirrorBarrier barrier = new MirrorBarrier(tiers.fast, tiers.store, "proxy/test")
                    .countingIn(BarrierWaits.in(registry, "proxy"));

            assertThat(barrier.sync(Duration.ofMillis(200))).as("no feeder: nothing mirrors the probe").isEmpty();
            assertThat(count(registry, "timeout")).isEqualTo(1);
            assertThat(sum(registry, "timeout")).isGreaterThanOrEqualTo(0.2);

            tiers.feeder();
            assertThat(barrier.sync(Duration.ofSeconds(20))).isPresent();
            assertThat(count(registry, "mirrored")).isEqualTo(1);
            assertThat(count(registry, "timeout")).isEqualTo(1);
        }
    }

    private static HistogramSnapshot.HistogramDataPointSnapshot point(PrometheusRegistry registry, String outcome) {
        HistogramSnapshot histogram = (HistogramSnapshot) registry.scrape().stream()
                .filter(s -> s.getMetadata().getPrometheusName().equals("thermocline_proxy_barrier_wait_seconds"))
                .findFirst().orElseThrow();
        return histogram.getDataPoints().stream().filter(p -> outcome.equals(p.getLabels().get("outcome"))).findFirst().orElseThrow();
    }

    private static long count(PrometheusRegistry registry, String outcome) {
        return point(registry, outcome).getCount();
    }

    private static double sum(PrometheusRegistry registry, String outcome) {
        return point(registry, outcome).getSum();
    }
}
