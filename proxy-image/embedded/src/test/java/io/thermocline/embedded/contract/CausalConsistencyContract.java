package io.thermocline.embedded.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.ClientSessionOptions;
import com.mongodb.client.model.Filters;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Cluster time and causal consistency as drivers use them, asserted identically against the
 * embedded replica set (with slow secondaries) and a real MongoDB replica set.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class CausalConsistencyContract {
    private static final AtomicInteger NAMES = new AtomicInteger();

    protected MongoClient client;
    protected MongoCollection<Document> coll;

    protected abstract String startDeployment();

    protected abstract void stopDeployment();

    @BeforeAll
    void connect() {
        client = MongoClients.create(startDeployment());
    }

    @AfterAll
    void disconnect() {
        if (client != null) {
            client.close();
        }
        stopDeployment();
    }

    @BeforeEach
    void freshCollection() {
        coll = client.getDatabase("causal").getCollection("c" + NAMES.incrementAndGet());
    }

    @Test
    void repliesCarryOperationTimeAndSignedClusterTime() {
        Document reply = client.getDatabase("causal").runCommand(new Document("insert", coll.getNamespace().getCollectionName())
            .append("documents", java.util.List.of(new Document("_id", 1))));
        assertThat(reply.get("operationTime")).isInstanceOf(BsonTimestamp.class);
        Document clusterTime = reply.get("$clusterTime", Document.class);
        assertThat(clusterTime.get("clusterTime")).isInstanceOf(BsonTimestamp.class);
        assertThat(((BsonTimestamp) clusterTime.get("clusterTime")).compareTo((BsonTimestamp) reply.get("operationTime")))
            .isGreaterThanOrEqualTo(0);
        Document signature = clusterTime.get("signature", Document.class);
        assertThat(signature.get("hash")).isInstanceOf(org.bson.types.Binary.class);
        assertThat(((org.bson.types.Binary) signature.get("hash")).getData()).hasSize(20);
        assertThat(signature.get("keyId")).isInstanceOf(Long.class);
    }

    @Test
    void operationTimeAdvancesWithEachWrite() {
        try (ClientSession session = client.startSession()) {
            coll.insertOne(session, new Document("_id", 1));
            BsonTimestamp first = session.getOperationTime();
            coll.insertOne(session, new Document("_id", 2));
            BsonTimestamp second = session.getOperationTime();
            assertThat(first).isNotNull();
            assertThat(second.compareTo(first)).isPositive();
            assertThat(session.getClusterTime()).isNotNull();
        }
    }

    @Test
    void causallyConsistentSessionReadsItsOwnWriteOnASecondary() {
        MongoCollection<Document> acknowledgedByPrimaryOnly = coll.withWriteConcern(WriteConcern.W1);
        MongoCollection<Document> fromSecondary = coll.withReadPreference(ReadPreference.secondaryPreferred())
            .withReadConcern(ReadConcern.LOCAL);
        try (ClientSession session = client.startSession(ClientSessionOptions.builder().causallyConsistent(true).build())) {
            for (int i = 0; i < 5; i++) {
                acknowledgedByPrimaryOnly.insertOne(session, new Document("_id", i));
                assertThat(fromSecondary.find(session, Filters.eq("_id", i)).first()).isNotNull();
                acknowledgedByPrimaryOnly.updateOne(session, Filters.eq("_id", i), new Document("$set", new Document("v", i)));
                assertThat(fromSecondary.find(session, Filters.eq("_id", i)).first().getInteger("v")).isEqualTo(i);
            }
        }
    }

    @Test
    void afterClusterTimeReadConcernSeesEverythingUpToThatTime() {
        Document reply = client.getDatabase("causal").runCommand(new Document("insert", coll.getNamespace().getCollectionName())
            .append("documents", java.util.List.of(new Document("_id", "x"))).append("writeConcern", new Document("w", 1)));
        BsonTimestamp operationTime = (BsonTimestamp) reply.get("operationTime");
        BsonDocument find = new BsonDocument("find", new BsonString(coll.getNamespace().getCollectionName()))
            .append("filter", new BsonDocument("_id", new BsonString("x")))
            .append("readConcern", new BsonDocument("level", new BsonString("local")).append("afterClusterTime", operationTime));
        Document found = client.getDatabase("causal").runCommand(find, ReadPreference.secondaryPreferred());
        assertThat(found.get("cursor", Document.class).getList("firstBatch", Document.class)).hasSize(1);
    }

    /** A causal point from another deployment's clock, ahead of this one's (a client's gossip included), is refused. */
    @Test
    void afterClusterTimeAheadOfTheDeploymentsClusterTimeIsRefused() {
        coll.insertOne(new Document("_id", 1));
        BsonTimestamp future = new BsonTimestamp((int) (System.currentTimeMillis() / 1000) + 3600, 1);
        BsonDocument find = new BsonDocument("find", new BsonString(coll.getNamespace().getCollectionName()))
            .append("readConcern", new BsonDocument("level", new BsonString("local")).append("afterClusterTime", future));
        assertThatThrownBy(() -> client.getDatabase("causal").runCommand(find))
            .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(72);
                assertThat(e.getErrorMessage()).contains("afterClusterTime value must not be greater than the current clusterTime");
            });
    }

    @Test
    void majorityWriteIsVisibleToMajorityReadsEverywhere() {
        MongoCollection<Document> majority = coll.withWriteConcern(WriteConcern.MAJORITY);
        majority.insertOne(new Document("_id", 1).append("v", new BsonInt32(1)));
        for (ReadPreference pref : java.util.List.of(ReadPreference.primary(), ReadPreference.secondaryPreferred())) {
            assertThat(coll.withReadPreference(pref).withReadConcern(ReadConcern.MAJORITY).countDocuments()).isEqualTo(1);
        }
    }
}
