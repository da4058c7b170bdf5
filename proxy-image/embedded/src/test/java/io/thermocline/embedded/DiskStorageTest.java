package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.embedded.storage.Storage;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskStorageTest {
    @TempDir
    Path dir;

    private EmbeddedReplicaSet open() {
        return EmbeddedReplicaSet.builder().name("disk").members(3).storage(Storage.directory(dir)).build().start();
    }

    private static ChangeStreamDocument<Document> next(MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor) {
        for (int i = 0; i < 100; i++) {
            ChangeStreamDocument<Document> event = cursor.tryNext();
            if (event != null) {
                return event;
            }
        }
        throw new AssertionError("no change event");
    }

    @Test
    void aDirectoryInUseIsRefusedWithAClearError() {
        try (EmbeddedReplicaSet rs = open()) {
            assertThatThrownBy(this::open).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("may be using this storage directory");
        }
    }

    @Test
    void aPortInUseFailsTheStartAndReleasesEverything() {
        try (EmbeddedReplicaSet first = EmbeddedReplicaSet.startSingle()) {
            int taken = first.primary().port();
            assertThatThrownBy(() -> EmbeddedReplicaSet.builder().storage(Storage.directory(dir)).members(2)
                .ports(List.of(0, taken)).build().start())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot listen on 127.0.0.1:" + taken);
        }
        try (EmbeddedReplicaSet again = open()) {
            assertThat(again.primary()).isNotNull();
        }
    }

    @Test
    void dataIndexesAndResumeTokensSurviveARestart() {
        BsonDocument token;
        try (EmbeddedReplicaSet rs = open(); MongoClient client = MongoClients.create(rs.connectionString())) {
            MongoCollection<Document> coll = client.getDatabase("d").getCollection("c");
            coll.createIndex(new Document("k", 1), new IndexOptions().unique(true));
            try (var cursor = coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertOne(new Document("_id", 1).append("k", "one"));
                token = next(cursor).getResumeToken();
            }
            coll.insertOne(new Document("_id", 2).append("k", "two"));
        }
        try (EmbeddedReplicaSet rs = open(); MongoClient client = MongoClients.create(rs.connectionString())) {
            MongoCollection<Document> coll = client.getDatabase("d").getCollection("c");
            assertThat(coll.countDocuments()).isEqualTo(2);
            assertThatThrownBy(() -> coll.insertOne(new Document("_id", 3).append("k", "one")))
                .isInstanceOf(MongoWriteException.class);
            try (var cursor = coll.watch().resumeAfter(token).maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                assertThat(next(cursor).getDocumentKey().getInt32("_id").getValue()).isEqualTo(2);
            }
            for (var member : rs.members()) {
                try (MongoClient direct = MongoClients.create(member.directConnectionString())) {
                    assertThat(direct.getDatabase("d").getCollection("c").find().map(d -> d.getInteger("_id"))
                        .into(new java.util.ArrayList<>())).containsExactlyInAnyOrderElementsOf(List.of(1, 2));
                }
            }
        }
    }
}
