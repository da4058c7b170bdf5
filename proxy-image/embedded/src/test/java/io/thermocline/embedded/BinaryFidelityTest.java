package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Binary values come back byte for byte with their subtype, UUIDs included (standard and legacy). */
class BinaryFidelityTest {

    static EmbeddedReplicaSet set;
    static MongoClient client;

    @BeforeAll
    static void start() {
        set = EmbeddedReplicaSet.startSingle();
        client = MongoClients.create(set.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    @Test
    void uuidAndOtherBinarySubtypesRoundTrip() {
        MongoCollection<BsonDocument> c = client.getDatabase("fidelity").getCollection("binaries", BsonDocument.class);
        UUID uuid = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");
        BsonDocument doc = new BsonDocument("_id", new BsonInt32(1))
                .append("standard", new BsonBinary(uuid))
                .append("legacy", new BsonBinary(BsonBinarySubType.UUID_LEGACY, new BsonBinary(uuid).getData()))
                .append("generic", new BsonBinary(new byte[] {1, 2, 3}));
        c.insertOne(doc);
        assertThat(c.find().first()).isEqualTo(doc);
        assertThat(c.find().first().getBinary("standard").asUuid()).isEqualTo(uuid);
    }
}
