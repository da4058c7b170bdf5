package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Sorts;
import io.thermocline.embedded.member.DelayedRequests;
import io.thermocline.embedded.storage.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stopping the set while a member still runs a command (a loaded machine's late query, a client's last request)
 * closes the on-disk stores only once that command has left them. Before, the stop went on to close the stores under
 * a command that still walked them: with a write in the walk, H2 found the version it held older than the one the
 * close had just committed and failed the close ({@code AssertionError: N != N+1} in {@code MVStore.closeStore}, seen
 * on loaded machines in the tiering module's on-disk runs).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StopDuringACommandTest {
    private static final int ORDERS = 10_000;

    @TempDir
    Path dir;

    private EmbeddedReplicaSet open() {
        return EmbeddedReplicaSet.builder()
                .name("stopquery")
                .members(1)
                .storage(Storage.directory(dir))
                .build()
                .start();
    }

    @Test
    void aStopClosesTheStoreOnlyAfterTheCommandInFlightLeftIt() throws Exception {
        EmbeddedReplicaSet rs = open();
        try (MongoClient client = MongoClients.create(rs.connectionString() + "&retryWrites=false&retryReads=false")) {
            List<Document> orders = new ArrayList<>();
            for (int i = 0; i < ORDERS; i++) {
                orders.add(new Document("_id", i).append("customer", i % 1_000).append("total", i));
            }
            client.getDatabase("shop").getCollection("orders").insertMany(orders);
            DelayedRequests.Held report = rs.delayNextRequest(rs.primary(), "aggregate");
            CompletableFuture<Object> reply = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.getDatabase("shop")
                            .getCollection("orders")
                            .aggregate(List.of(
                                    Aggregates.sort(Sorts.descending("total")),
                                    Aggregates.group("$customer", Accumulators.sum("spent", "$total")),
                                    Aggregates.sort(Sorts.descending("spent"))))
                            .into(new ArrayList<>());
                } catch (RuntimeException e) {
                    return e;
                }
            });
            assertThat(report.awaitArrived(Duration.ofSeconds(60)))
                    .as("the report over every order reached the member")
                    .isTrue();
            rs.close(); // wakes the held report, which then walks the whole store
            assertThat(report.awaitRan(Duration.ZERO))
                    .as("the report in flight had ended when the stop returned")
                    .isTrue();
            // its client is gone with the connection, but the member answered it from an open store: before, the stop
            // closed the store under it ("storage engine failed: ... This store is closed")
            assertThat(report.reply().toJson()).contains("\"ok\": 1.0").doesNotContain("errmsg");
            assertThat(reply.get(60, TimeUnit.SECONDS)).isInstanceOf(RuntimeException.class);
        }
        try (EmbeddedReplicaSet again = open();
                MongoClient client = MongoClients.create(again.connectionString())) {
            assertThat(client.getDatabase("shop").getCollection("orders").countDocuments())
                    .as("every acknowledged order")
                    .isEqualTo(ORDERS);
        }
    }
}
