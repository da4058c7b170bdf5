package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.replication.Durability;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A set kept on a disk that fills up acknowledges nothing it cannot keep, and says why it refuses writes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FullDiskTest {
    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedWriteSurvivesTheDiskFillingUpAndLaterWritesAreRefusedWithTheCause() {
        FullDisk disk = new FullDisk();
        List<Integer> acknowledged = new ArrayList<>();
        MongoException refused = null;
        try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().name("full").members(1).storage(disk.storage(dir)).build().start();
             MongoClient client = MongoClients.create(rs.connectionString() + "&retryWrites=false")) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            for (int i = 0; i < 200; i++) {
                if (i == 100) {
                    disk.fill();
                }
                try {
                    orders.insertOne(new Document("_id", i));
                    acknowledged.add(i);
                } catch (MongoException e) {
                    refused = e;
                }
            }
            assertThat(acknowledged).as("acknowledged before the disk filled").contains(0, 99);
            assertThat(refused).as("a write on the full disk").isNotNull();
            assertThat(rs.writesRefused()).hasValueSatisfying(cause -> assertThat(cause).contains("disk full", dir.toString()));
            MongoException later = refused;
            assertThatThrownBy(() -> orders.insertOne(new Document("_id", 1000))).isInstanceOfSatisfying(MongoException.class, e -> {
                assertThat(e.getCode()).isEqualTo(Durability.REFUSED_CODE);
                assertThat(e.getMessage()).contains("disk full");
            });
            assertThat(later.getMessage()).contains("disk full");
        }
        disk.free();
        try (EmbeddedReplicaSet again = EmbeddedReplicaSet.builder().name("full").members(1).storage(Storage.directory(dir)).build().start();
             MongoClient client = MongoClients.create(again.connectionString())) {
            List<Integer> kept = new ArrayList<>();
            client.getDatabase("shop").getCollection("orders").find().forEach(d -> kept.add(d.getInteger("_id")));
            assertThat(kept).as("after a restart with space again").containsAll(acknowledged);
            assertThat(again.writesRefused()).isEmpty();
        }
    }
}
