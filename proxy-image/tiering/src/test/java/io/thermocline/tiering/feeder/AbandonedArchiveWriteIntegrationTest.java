package io.thermocline.tiering.feeder;

import static io.thermocline.tiering.TwoTiers.byId;
import static io.thermocline.tiering.TwoTiers.order;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.DelayedRequests;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import org.bson.BsonInt32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 37's second candidate: the feeder gives up on an archive write at its client-side timeout and retries the
 * batch, but the write itself is still on its way (a slow network) and the archive runs it late, after the retried
 * batch wrote a newer version. Nothing then mirrors that document again until its next write: the archive holds an
 * old version under a mirrored-through that promises the new one. The feeder's writes share one session with rising
 * {@code txnNumber}s, so the archive refuses the late one ({@code TransactionTooOld}).
 */
@Timeout(90)
class AbandonedArchiveWriteIntegrationTest extends OnTwoTiers {

    static final Instant NOW = Instant.now();
    Feeder feeder;

    @BeforeEach
    void start() throws Exception {
        feeder = tiers.feeder(
                MissingImageIntegrationTest.ONE_EVENT_PER_BATCH, TwoTiers.feederOptions(FaultInjection.NONE));
        tiers.fastOrders().insertOne(order(1, NOW, "v1"));
        tiers.sync();
    }

    @AfterEach
    void stop() {
        if (feeder != null) {
            feeder.close();
        }
    }

    @Test
    void aWriteTheFeederGaveUpOnThatTheArchiveRunsLateDoesNotUndoTheRetriedBatch() throws Exception {
        assumeTrue(tiers.embeddedArchive().isPresent(), "holding a request on its way needs the embedded archive");
        EmbeddedReplicaSet archive = tiers.embeddedArchive().get();
        DelayedRequests.Held late = archive.delayNextRequest(archive.primary(), "update");
        try {
            tiers.fastOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v2"));
            assertThat(late.awaitArrived(Duration.ofSeconds(20)))
                    .as("the feeder sent the mirror write of v2")
                    .isTrue();
            // the feeder times out on it (a second or so: its lease is 1 s), retries, and mirrors the next version too
            tiers.fastOrders().updateOne(Filters.eq("_id", 1), Updates.set("state", "v3"));
            tiers.sync();
            assertThat(byId(tiers.archiveOrders(), new BsonInt32(1))
                            .getString("state")
                            .getValue())
                    .isEqualTo("v3");
        } finally {
            late.release();
        }
        assertThat(late.awaitRan(Duration.ofSeconds(20)))
                .as("the archive ran the late write")
                .isTrue();
        assertThat(byId(tiers.archiveOrders(), new BsonInt32(1))
                        .getString("state")
                        .getValue())
                .as("the archive after the abandoned write of v2 ran late")
                .isEqualTo("v3");
    }
}
