package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.embedded.storage.Storage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stopping the set while a multi-document statement runs (the demo's Ctrl-C during a minutes-long updateMany) does
 * not wait for the rest of the statement: as mongod at shutdown, it stops between two documents, those before stay
 * written, and the stop goes on. Before, the stop waited until the statement had changed every document.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StopDuringAStatementTest {
    private static final int ORDERS = 20;

    @TempDir
    Path dir;

    private EmbeddedReplicaSet open() {
        return EmbeddedReplicaSet.builder()
                .name("stop")
                .storage(Storage.directory(dir))
                .build()
                .start();
    }

    @Test
    void aStopEndsAMultiDocumentStatementBetweenTwoDocumentsAndKeepsTheOnesBefore() throws Exception {
        EmbeddedReplicaSet rs = open();
        CompletableFuture<Object> update;
        try (MongoClient client = MongoClients.create(rs.connectionString() + "&retryWrites=false")) {
            List<Document> orders = new ArrayList<>();
            for (int i = 0; i < ORDERS; i++) {
                orders.add(new Document("_id", i).append("state", "placed"));
            }
            client.getDatabase("shop").getCollection("orders").insertMany(orders);
            long heldBefore = rs.documentWritesHeld();
            rs.holdWritesAfterDocuments(rs.primary(), 1);
            update = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.getDatabase("shop")
                            .getCollection("orders")
                            .updateMany(Filters.eq("state", "placed"), Updates.set("state", "paid"));
                } catch (RuntimeException e) {
                    return e;
                }
            });
            org.awaitility.Awaitility.await()
                    .atMost(60, TimeUnit.SECONDS)
                    .until(() -> rs.documentWritesHeld() > heldBefore || update.isDone());
            assertThat(update.isDone())
                    .as("the statement is held after its first document")
                    .isFalse();
            rs.close(); // the stop, while the statement waits before its second document
            assertThat(update.get(60, TimeUnit.SECONDS))
                    .as("the statement's client gets an error, not a whole update")
                    .isInstanceOf(RuntimeException.class);
        }
        try (EmbeddedReplicaSet again = open();
                MongoClient client = MongoClients.create(again.connectionString())) {
            assertThat(client.getDatabase("shop").getCollection("orders").countDocuments(Filters.eq("state", "paid")))
                    .as("the document written before the stop, and none after it")
                    .isEqualTo(1);
            assertThat(client.getDatabase("shop").getCollection("orders").countDocuments())
                    .isEqualTo(ORDERS);
        }
    }
}
