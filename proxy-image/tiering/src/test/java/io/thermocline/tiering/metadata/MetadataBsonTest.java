package io.thermocline.tiering.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import java.time.Instant;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;

class MetadataBsonTest {

    static final Instant T = Instant.parse("2026-03-01T10:00:00Z");

    @Test
    void feederCheckpointRoundTrips() {
        FeederCheckpoint checkpoint = new FeederCheckpoint(new BsonDocument("_data", new BsonString("82")), new BsonTimestamp(5, 6),
                new TransactionId(new BsonDocument("id", new BsonBinary(new byte[16])), 4), 10, 1.5, 3, "feeder-a", T, 7);
        BsonDocument stored = MetadataStore.fromFeederCheckpoint(checkpoint);
        assertThat(MetadataStore.toFeederCheckpoint(stored)).isEqualTo(checkpoint);
    }

    @Test
    void namespaceStateRoundTripsIncludingNonDocumentWarmerPosition() {
        NamespaceState state = new NamespaceState("shop.orders", T, T.minusSeconds(5),
                new io.thermocline.tiering.metadata.WarmerCheckpoint(T.minusSeconds(60), new BsonDateTime(T.toEpochMilli()), new BsonInt32(42), false, 12, T),
                new EvictorPass(T, T.minusSeconds(9), 3, 1, 0), 4);
        assertThat(MetadataStore.toNamespaceState(MetadataStore.fromNamespaceState(state))).isEqualTo(state);
        NamespaceState empty = NamespaceState.initial("shop.orders");
        assertThat(MetadataStore.toNamespaceState(MetadataStore.fromNamespaceState(empty))).isEqualTo(empty);
    }

    @Test
    void coverageBoundCoversAgesAtOrAfterIt() {
        NamespaceState state = NamespaceState.initial("d.c").withCoverage(T);
        assertThat(state.covers(T)).isTrue();
        assertThat(state.covers(T.minusMillis(1))).isFalse();
        assertThat(NamespaceState.initial("d.c").covers(T)).isFalse();
    }

    @Test
    void mirroredThroughNeverMovesBackwards() {
        try (MongoClient unused = MongoClients.create("mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=100")) {
            MetadataStore store = new MetadataStore(unused);
            FeederCheckpoint at10 = new FeederCheckpoint(null, new BsonTimestamp(10, 0), null, 0, 0, 0, null, T, 3);
            FeederCheckpoint at9 = new FeederCheckpoint(null, new BsonTimestamp(9, 0), null, 0, 0, 0, null, T, 3);
            assertThatThrownBy(() -> store.saveFeederCheckpoint(at10, at9)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("backwards");
        }
    }
}
