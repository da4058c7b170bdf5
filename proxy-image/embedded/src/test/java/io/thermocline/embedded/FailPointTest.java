package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The failCommand fail point as mongod has it for tests: configureFailPoint answers the times entered, waitForFailPoint waits for more. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailPointTest {

    @Test
    void waitForFailPointReturnsOnceACommandIsHeldThereAndFailsAfterMaxTimeMsOtherwise() throws Exception {
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().name("fp").members(1).build().start();
             MongoClient client = MongoClients.create(rs.connectionString())) {
            MongoDatabase admin = client.getDatabase("admin");
            MongoCollection<Document> coll = client.getDatabase("fp").getCollection("c");
            coll.insertOne(new Document("_id", "before")); // the collection exists: the held insert is the only one entering
            long count = admin.runCommand(new Document("configureFailPoint", "failCommand").append("mode", new Document("times", 1))
                    .append("data", new Document("failCommands", List.of("insert")).append("blockConnection", true)
                            .append("blockTimeMS", 3_000))).get("count", Number.class).longValue();
            CompletableFuture<Void> held = CompletableFuture.runAsync(() -> coll.insertOne(new Document("_id", "held")));

            admin.runCommand(new Document("waitForFailPoint", "failCommand").append("timesEntered", count + 1).append("maxTimeMS", 30_000));
            assertThat(held).as("the insert is held at the fail point").isNotDone();
            held.get(30, TimeUnit.SECONDS);
            assertThat(coll.countDocuments()).isEqualTo(2);

            MongoExecutionTimeoutException notEntered = catchThrowableOfType(MongoExecutionTimeoutException.class, () -> admin.runCommand(
                    new Document("waitForFailPoint", "failCommand").append("timesEntered", count + 2).append("maxTimeMS", 200)));
            assertThat(notEntered).as("nothing enters the spent fail point").isNotNull();
            assertThat(notEntered.getCode()).as("MaxTimeMSExpired").isEqualTo(50);
            long after = admin.runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"))
                    .get("count", Number.class).longValue();
            assertThat(after).isEqualTo(count + 1);
        }
    }
}
