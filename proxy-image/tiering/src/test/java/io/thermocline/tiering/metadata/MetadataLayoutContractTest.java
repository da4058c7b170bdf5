package io.thermocline.tiering.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.OnTwoTiers;
import java.time.Duration;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;

/**
 * The layout the operator reads without this module's classes (its MongoTieringObserver):
 * the feeder checkpoint at {@code thermocline.state {_id: "feeder"}} with {@code mirroredThrough}
 * (a Timestamp) and {@code lagSeconds}, and a probe in {@code thermocline.probes} that the
 * checkpoint comes to cover. Renaming any of these breaks the operator's status and deletion.
 */
class MetadataLayoutContractTest extends OnTwoTiers {

    @Test
    void feederCheckpointIsWhereTheOperatorReadsItAndCoversAnOutsideProbe() throws InterruptedException {
        tiers.feeder();
        tiers.sync();
        MongoCollection<BsonDocument> state =
                tiers.fastSync.getDatabase("thermocline").getCollection("state", BsonDocument.class);
        BsonDocument checkpoint = state.find(Filters.eq("_id", "feeder")).first();
        assertThat(checkpoint).isNotNull();
        assertThat(checkpoint.get("mirroredThrough").isTimestamp()).isTrue();
        assertThat(checkpoint.get("lagSeconds").isNumber()).isTrue();

        BsonTimestamp probe;
        try (ClientSession session = tiers.fastSync.startSession()) {
            tiers.fastSync
                    .getDatabase("thermocline")
                    .getCollection("probes")
                    .updateOne(
                            session,
                            Filters.eq("_id", "operator"),
                            Updates.inc("seq", 1L),
                            new UpdateOptions().upsert(true));
            probe = session.getOperationTime();
        }
        assertThat(probe).isNotNull();
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(state.find(Filters.eq("_id", "feeder"))
                                .first()
                                .getTimestamp("mirroredThrough")
                                .compareTo(probe))
                        .isGreaterThanOrEqualTo(0));
    }
}
