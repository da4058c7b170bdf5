package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.embedded.oplog.HybridClock;
import io.thermocline.embedded.oplog.UpdateDescriptions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.Test;

class OplogTest {

    @Test
    void resumingFromAPointThatFellOffTheBoundedOplogFailsWithHistoryLost() {
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().oplogSize(10).build().start();
             MongoClient client = MongoClients.create(rs.connectionString())) {
            MongoCollection<Document> coll = client.getDatabase("o").getCollection("c");
            BsonDocument token;
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                     coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertOne(new Document("_id", 0));
                ChangeStreamDocument<Document> event = null;
                while (event == null) {
                    event = cursor.tryNext();
                }
                token = event.getResumeToken();
            }
            for (int i = 1; i <= 20; i++) {
                coll.insertOne(new Document("_id", i));
            }
            assertThat(rs.oplogSize()).isEqualTo(10);
            assertThatThrownBy(() -> coll.watch().resumeAfter(token).cursor().tryNext())
                .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(286);
                    assertThat(e.getErrorCodeName()).isEqualTo("ChangeStreamHistoryLost");
                });
        }
    }

    @Test
    void clusterTimeIncreasesStrictlyWithinASecondAndFollowsGossip() {
        HybridClock clock = new HybridClock(Clock.fixed(Instant.ofEpochSecond(1_000), ZoneOffset.UTC));
        BsonTimestamp a = clock.tick();
        BsonTimestamp b = clock.tick();
        assertThat(a).isEqualTo(new BsonTimestamp(1_000, 1));
        assertThat(b).isEqualTo(new BsonTimestamp(1_000, 2));
        clock.advanceTo(new BsonTimestamp(2_000, 7));
        assertThat(clock.tick()).isEqualTo(new BsonTimestamp(2_000, 8));
        clock.advanceTo(new BsonTimestamp(1_500, 1));
        assertThat(clock.now()).isEqualTo(new BsonTimestamp(2_000, 8));
    }

    @Test
    void updateDescriptionsNameChangedPathsAsTheServerDoes() {
        record Case(String before, String after, String expected) {
        }
        for (Case c : new Case[] {
            new Case("{_id: 1, a: 1}", "{_id: 1, a: 2}", "{updatedFields: {a: 2}, removedFields: [], truncatedArrays: []}"),
            new Case("{_id: 1, a: 1, b: 1}", "{_id: 1, a: 1}", "{updatedFields: {}, removedFields: ['b'], truncatedArrays: []}"),
            new Case("{_id: 1, s: {x: 1, y: 1}}", "{_id: 1, s: {x: 2, y: 1}}",
                "{updatedFields: {'s.x': 2}, removedFields: [], truncatedArrays: []}"),
            new Case("{_id: 1, arr: [1, 2]}", "{_id: 1, arr: [1, 2, 3]}",
                "{updatedFields: {'arr.2': 3}, removedFields: [], truncatedArrays: []}"),
            new Case("{_id: 1, arr: [1, 2, 3]}", "{_id: 1, arr: [1]}",
                "{updatedFields: {}, removedFields: [], truncatedArrays: [{field: 'arr', newSize: 1}]}"),
            new Case("{_id: 1, arr: [1, 2]}", "{_id: 1, arr: [5, 2]}",
                "{updatedFields: {arr: [5, 2]}, removedFields: [], truncatedArrays: []}"),
            new Case("{_id: 1, a: 1}", "{_id: 1, a: 1.0}", "{updatedFields: {a: 1.0}, removedFields: [], truncatedArrays: []}"),
        }) {
            assertThat(UpdateDescriptions.diff(BsonDocument.parse(c.before()), BsonDocument.parse(c.after())))
                .as(c.before() + " -> " + c.after()).isEqualTo(BsonDocument.parse(c.expected()));
        }
    }
}
