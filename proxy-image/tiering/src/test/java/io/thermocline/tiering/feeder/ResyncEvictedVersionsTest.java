package io.thermocline.tiering.feeder;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.provenance.Fence;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * After lost history, a resync writes the version an eviction removed when the archive does not hold it
 * (the evictor no longer waits for the archive to hold it; the feeder would have mirrored it from the fence).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResyncEvictedVersionsTest extends OnTwoTiers {

    private void evict(BsonDocument version) {
        tiers.inFastTransaction(session -> tiers.fences.writeEviction(session, TwoTiers.NS, version));
    }

    private static BsonDocument order(int id, String state) {
        return new BsonDocument("_id", new BsonInt32(id)).append("state", new BsonString(state));
    }

    private Resync.Result resync() {
        ArchiveWriter writer = new ArchiveWriter(
                tiers.archive, new DeadLetters(tiers.store), FeederMetrics.in(new PrometheusRegistry()));
        return new Resync(tiers.fast, tiers.archive, tiers.store, writer).run(List.of(TwoTiers.POLICY), () -> 10_000);
    }

    @Test
    void anEvictedVersionTheArchiveMissedIsWrittenAndOneItHoldsIsLeft() {
        tiers.archiveOrders().insertOne(order(1, "c'")); // the undo after c' never reached the archive
        tiers.archiveOrders().insertOne(order(2, "same"));
        evict(order(1, "c"));
        evict(order(2, "same"));
        Resync.Result result = resync();
        assertThat(tiers.archiveOrders().find(Filters.eq("_id", 1)).first()).isEqualTo(order(1, "c"));
        assertThat(tiers.archiveOrders().find(Filters.eq("_id", 2)).first()).isEqualTo(order(2, "same"));
        assertThat(result.upserted()).as("only the missed version is written").isOne();
    }

    @Test
    void aVersionEvictedBeforeADropIsNotBroughtBack() throws Exception {
        evict(order(3, "before the drop"));
        Thread.sleep(5);
        tiers.fences.writeDrop(TwoTiers.NS, Fence.Kind.DROPPED);
        resync();
        assertThat(tiers.archiveOrders().countDocuments(Filters.eq("_id", 3))).isZero();
    }
}
