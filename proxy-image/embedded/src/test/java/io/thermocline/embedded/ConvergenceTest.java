package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.embedded.member.Member;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Concurrent writers: every member converges to the same data, and a change stream sees every write once, in order. */
class ConvergenceTest {
    private static final int WRITERS = 4;
    private static final int OPS = 150;

    @Test
    void concurrentWritersConvergeOnEveryMemberAndEveryWriteIsStreamedOnce() throws Exception {
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().name("conv").members(3)
                .replicationLag(Duration.ofMillis(20)).build().start();
             MongoClient client = MongoClients.create(rs.connectionString())) {
            MongoCollection<Document> coll = client.getDatabase("conv").getCollection("c");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                     coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                List<CompletableFuture<Void>> writers = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    writers.add(CompletableFuture.runAsync(() -> {
                        for (int i = 0; i < OPS; i++) {
                            String id = writer + "-" + (i % 20);
                            switch (i % 3) {
                                case 0 -> coll.updateOne(Filters.eq("_id", id), Updates.inc("n", 1),
                                    new com.mongodb.client.model.UpdateOptions().upsert(true));
                                case 1 -> coll.updateMany(Filters.eq("w", writer), Updates.set("last", i));
                                default -> coll.findOneAndUpdate(Filters.eq("_id", id), Updates.set("w", writer));
                            }
                        }
                    }));
                }
                CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
                coll.insertOne(new Document("_id", "end"));

                Map<String, Integer> increments = new HashMap<>();
                ChangeStreamDocument<Document> event;
                org.bson.BsonTimestamp previous = null;
                do {
                    event = stream.tryNext();
                    if (event == null) {
                        continue;
                    }
                    if (previous != null) {
                        assertThat(event.getClusterTime().compareTo(previous)).isPositive();
                    }
                    previous = event.getClusterTime();
                    String id = event.getDocumentKey().get("_id").asString().getValue();
                    boolean incremented = event.getOperationType().getValue().equals("insert")
                        || (event.getUpdateDescription() != null && event.getUpdateDescription().getUpdatedFields().containsKey("n"));
                    if (incremented && !id.equals("end")) {
                        increments.merge(id, 1, Integer::sum);
                    }
                } while (event == null || !"end".equals(event.getDocumentKey().get("_id").asString().getValue()));

                assertThat(rs.awaitReplication(Duration.ofSeconds(20))).isTrue();
                List<Document> expected = coll.find().sort(new Document("_id", 1)).into(new ArrayList<>());
                for (Document d : expected) {
                    if (!d.getString("_id").equals("end")) {
                        assertThat(increments.get(d.getString("_id"))).as(d.getString("_id")).isEqualTo(d.getInteger("n"));
                    }
                }
                for (Member m : rs.members()) {
                    try (MongoClient direct = MongoClients.create(m.directConnectionString())) {
                        assertThat(direct.getDatabase("conv").getCollection("c").find().sort(new Document("_id", 1))
                            .into(new ArrayList<>())).as(m.host()).isEqualTo(expected);
                    }
                }
            }
        }
    }
}
