package io.thermocline.tiering.window;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.CollectionPolicy;
import java.time.Duration;
import java.time.Instant;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

class WindowTest {

    static final Instant NOW = Instant.parse("2026-03-01T10:00:00.250Z");
    static final Window BY_DATE = new Window(new CollectionPolicy("shop", "orders", "meta.createdAt", Duration.ofDays(30)));
    static final Window BY_ID = new Window(new CollectionPolicy("shop", "events", "_id", Duration.ofHours(1)));

    @Test
    void cutoffIsNowMinusTheWindow() {
        assertThat(BY_DATE.cutoff(NOW)).isEqualTo(NOW.minus(Duration.ofDays(30)));
    }

    @Test
    void dateAgeFollowsDottedPath() {
        BsonDocument doc = BsonDocument.parse("{meta: {createdAt: {$date: '2026-02-01T00:00:00Z'}}}");
        assertThat(BY_DATE.age(doc)).contains(Instant.parse("2026-02-01T00:00:00Z"));
    }

    @Test
    void valuesOfAnotherTypeHaveNoAge() {
        assertThat(BY_DATE.age(BsonDocument.parse("{meta: {createdAt: '2026-02-01'}}"))).isEmpty();
        assertThat(BY_DATE.age(new BsonDocument())).isEmpty();
        assertThat(BY_ID.age(new BsonDocument("_id", new BsonString("x")))).isEmpty();
    }

    @Test
    void objectIdAgeIsItsCreationSecond() {
        ObjectId id = new ObjectId(java.util.Date.from(NOW));
        assertThat(BY_ID.age(new BsonDocument("_id", new BsonObjectId(id)))).contains(Instant.parse("2026-03-01T10:00:00Z"));
    }

    @Test
    void objectIdBoundRoundsUpToTheNextWholeSecondSoNoOlderIdMatches() {
        BsonObjectId bound = BY_ID.bound(NOW).asObjectId();
        assertThat(bound.getValue().getTimestamp()).isEqualTo((int) NOW.getEpochSecond() + 1);
        assertThat(BY_ID.bound(Instant.parse("2026-03-01T10:00:00Z")).asObjectId().getValue().getTimestamp())
                .isEqualTo((int) NOW.getEpochSecond());
    }

    @Test
    void dateBoundIsTheInstantInMillis() {
        assertThat(BY_DATE.bound(NOW)).isEqualTo(new BsonDateTime(NOW.toEpochMilli()));
    }

    @Test
    void boundAboveIsTheNextRepresentableAge() {
        assertThat(BY_DATE.boundAbove(NOW)).isEqualTo(NOW.plusMillis(1));
        assertThat(BY_ID.boundAbove(NOW)).isEqualTo(Instant.parse("2026-03-01T10:00:01Z"));
    }
}
