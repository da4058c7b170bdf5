package io.thermocline.tiering.feeder;

import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.FeederHealth;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An archive that stays connected but leaves the feeder's writes unanswered (a stalled disk, a stuck primary; issue 40):
 * the feeder names the outage, {@code stalled}, in its health (what {@code thermocline status} and the operator's
 * FeederHealthy read) and its metric, not a generic failure, keeps the write queued in the fast tier, and mirrors it once
 * the archive answers again. Before, the driver's timeout of a connected archive read as {@code unreachable}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StalledArchiveFeederIntegrationTest extends OnTwoTiers {

    @Test
    void aStalledArchiveIsReportedAsStalledAndTheQueuedWriteIsMirroredOnceItAnswers() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        tiers.feeder(
                new FeederConfig(100, Duration.ofMillis(20), true),
                TwoTiers.feederOptions(FaultInjection.NONE).withRegistry(registry));
        tiers.fastOrders().insertOne(order(1, Instant.now(), "before"));
        tiers.sync();

        var admin = tiers.archiveSync.getDatabase("admin");
        // each mirror write waits 3 s at the archive, longer than the feeder's deadline for it (its 1 s lease): it
        // times
        // out on a connection that is open and answers hello
        admin.runCommand(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {"
                + "blockConnection: true, blockTimeMS: 3000, failCommands: ['insert', 'update', 'delete']}}"));
        try {
            tiers.fastOrders().insertOne(order(2, Instant.now(), "during"));
            await(
                    "the feeder reports the archive unavailable",
                    () -> tiers.store.feederHealth().archiveUnavailable() != null);
            FeederHealth.ArchiveUnavailable down = tiers.store.feederHealth().archiveUnavailable();
            assertThat(down.why()).as("why, in the shared state: %s", down).isEqualTo("stalled");
            assertThat(down.cause()).as("the driver's error").isNotBlank();
            assertThat(archiveUnavailable(registry, "stalled")).isEqualTo(1);
            assertThat(archiveUnavailable(registry, "unreachable")).isZero();
            assertThat(tiers.store.feederHealth().deadLetters())
                    .as("trouble of the whole archive, not of the document")
                    .isZero();
        } finally {
            admin.runCommand(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
        }
        await("the queued write reaches the archive", () -> byId(tiers.archiveOrders(), new BsonInt32(2)) != null);
        await("the feeder clears its health", () -> tiers.store.feederHealth().archiveUnavailable() == null);
        assertThat(archiveUnavailable(registry, "stalled")).isZero();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static double archiveUnavailable(PrometheusRegistry registry, String why) {
        return registry.scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals("thermocline_feeder_archive_unavailable"))
                .flatMap(m -> ((GaugeSnapshot) m).getDataPoints().stream())
                .filter(p -> why.equals(p.getLabels().get("why")))
                .mapToDouble(GaugeSnapshot.GaugeDataPointSnapshot::getValue)
                .findFirst()
                .orElseThrow();
    }
}
