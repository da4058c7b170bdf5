package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's first whole-collection write on the embedded default, both tiers on disk: an {@code updateMany} over every
 * sample order, most of them only in the archive, so the proxy copies them up in several guarded transactions. It
 * failed after 30 s ("a majority read found a write statement that did not reach the oplog within 30s", 96) while the
 * embedded set made readers wait for whole multi-document statements. Every order is changed once, the answer counts
 * them as one replica set would, and the archive receives every change.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class WholeCollectionWriteTest {

    private static final int ORDERS = 2_500;

    @TempDir
    Path dir;

    @Test
    void anUpdateManyOverTheWholeCollectionChangesEveryDocumentOnceAndReachesTheArchive() throws Exception {
        try (EmbeddedStack stack = EmbeddedStack.start(
                        LocalStack.options(dir, "--sample-documents", String.valueOf(ORDERS)),
                        new PrintWriter(new StringWriter(), true));
                MongoClient proxy = MongoClients.create("mongodb://127.0.0.1:" + stack.proxyPort() + "/");
                MongoClient archive =
                        MongoClients.create(stack.config().tiers().archive().uri())) {
            MongoCollection<Document> orders =
                    proxy.getDatabase(SampleData.DATABASE).getCollection(SampleData.COLLECTION);
            assertThat(orders.countDocuments()).as("the sample orders").isEqualTo(ORDERS);

            UpdateResult touched = orders.updateMany(Filters.exists("status"), Updates.inc("revision", 1));
            assertThat(touched.getMatchedCount()).as("matched").isEqualTo(ORDERS);
            assertThat(touched.getModifiedCount()).as("modified").isEqualTo(ORDERS);
            assertThat(orders.countDocuments(Filters.eq("revision", 1)))
                    .as("changed exactly once, through the proxy")
                    .isEqualTo(ORDERS);
            assertThat(orders.countDocuments()).as("no document added or lost").isEqualTo(ORDERS);

            MongoCollection<Document> archived =
                    archive.getDatabase(SampleData.DATABASE).getCollection(SampleData.COLLECTION);
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofMinutes(3))
                    .untilAsserted(() -> assertThat(archived.countDocuments(Filters.eq("revision", 1)))
                            .as("changes the feeder mirrored to the archive")
                            .isEqualTo(ORDERS));
            assertThat(archived.countDocuments(Filters.gt("revision", 1)))
                    .as("changed twice in the archive")
                    .isZero();
        }
    }
}
