package io.thermocline.tiering.feeder;

import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import io.thermocline.config.FeederConfig;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 37, the resync's form of a missing image: a first start (or a resync after lost history)
 * streams from a probe taken before its scan of the fast tier and published mirrored-through just
 * before that probe as soon as the scan was written. A document deleted between the probe and the
 * scan is not copied, so the archive kept the version before its last unmirrored write until the
 * delete's event was applied, while mirrored-through already covered that write.
 */
@Timeout(90)
class FirstStartScanRaceIntegrationTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();

    Feeder feeder;
    HeldSubscription scan;
    HeldSubscription delete;

    @AfterEach
    void stop() {
        if (scan != null) {
            scan.release();
        }
        if (delete != null) {
            delete.release();
        }
        if (feeder != null) {
            feeder.close();
        }
    }

    @Test
    void aDocumentDeletedBetweenTheStreamsStartAndTheScanKeepsMirroredThroughBackUntilItsDeleteIsApplied()
            throws Exception {
        BsonDocument archived = order(1, NOW, "the archive's version");
        tiers.archiveOrders().insertOne(archived);
        // accepted by the proxy before any feeder ran: newer than the archive's version
        tiers.fastOrders().insertOne(order(1, NOW, "updated through the proxy"));
        BsonTimestamp readerBarrier = tiers.barrier.probe();

        scan = HeldSubscription.firstFindOn(TwoTiers.NS, tiers.fast);
        delete = HeldSubscription.firstBulkWriteWithA(DeleteOneModel.class, tiers.archive);
        feeder = new Feeder(
                        scan.client(),
                        delete.client(),
                        List.of(TwoTiers.POLICY),
                        new FeederConfig(1, Duration.ofMillis(20), true),
                        TwoTiers.feederOptions(FaultInjection.NONE))
                .start();
        assertThat(scan.awaitHeld(Duration.ofSeconds(20)))
                .as("the first start's scan was reached")
                .isTrue();
        tiers.fastOrders()
                .deleteOne(Filters.eq("_id", 1)); // a plain delete (a TTL index's): no fence for the resync to find
        scan.release();

        assertThat(delete.awaitHeld(Duration.ofSeconds(20)))
                .as("the delete's archive write was reached")
                .isTrue();
        // the resync's checkpoint is written before any batch of the stream, so before the held delete
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> tiers.store.feederCheckpoint().resumeToken() != null);
        FeederCheckpoint published = tiers.store.feederCheckpoint();
        BsonDocument inArchive = byId(tiers.archiveOrders(), new BsonInt32(1));
        assertThat(published.covers(readerBarrier) && archived.equals(inArchive))
                .as(
                        "mirrored-through %s covers the reader's barrier %s while the archive holds %s",
                        Feeder.describe(published.mirroredThrough()), Feeder.describe(readerBarrier), inArchive)
                .isFalse();

        delete.release();
        tiers.sync();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1)))
                .as("the delete reached the archive")
                .isNull();
    }
}
