package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

class SmokeTest {
    @Test
    void singleMemberWorks() {
        long t0 = System.nanoTime();
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.startSingle();
             MongoClient client = MongoClients.create(rs.connectionString())) {
            System.out.println("started in ms " + (System.nanoTime() - t0) / 1_000_000);
            MongoCollection<Document> c = client.getDatabase("db").getCollection("c");
            try (MongoCursor<ChangeStreamDocument<Document>> stream = c.watch().maxAwaitTime(200, TimeUnit.MILLISECONDS).iterator()) {
                c.insertOne(new Document("_id", 1).append("a", 1));
                c.updateOne(new Document("_id", 1), new Document("$set", new Document("b", 2)));
                c.deleteOne(new Document("_id", 1));
                System.out.println(stream.next());
                System.out.println(stream.next());
                System.out.println(stream.next());
            }
            assertThat(c.countDocuments()).isZero();
        }
    }
}
