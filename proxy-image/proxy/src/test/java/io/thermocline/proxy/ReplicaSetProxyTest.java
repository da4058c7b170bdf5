package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadPreference;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.ClientSessionOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.connection.ClusterType;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.member.Member;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The proxy in front of a three-member replica set: discovery, elections, sessions, transactions, gossip. */
class ReplicaSetProxyTest {
    private static EmbeddedReplicaSet rs;
    private static ProxyFixture fixture;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().members(3).build().start();
        // Seed with one secondary only: the proxy must discover the rest and find the primary itself.
        // Backend links are compressed (zstd), as the URI asks.
        Member seed = rs.secondaries().get(0);
        fixture = ProxyFixture.inFrontOf("mongodb://" + seed.host() + "/?replicaSet=" + rs.name() + "&compressors=zstd", "");
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(fixture.uri()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    @AfterAll
    static void stop() {
        client.close();
        fixture.close();
        rs.close();
    }

    @BeforeEach
    void awaitPrimary() {
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy().topology(Tier.ARCHIVE).primary() != null);
    }

    @Test
    void discoversEveryMemberAndThePrimaryFromOneSeed() {
        TierTopology topology = fixture.proxy().topology(Tier.ARCHIVE);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(fixture.proxy().topology(Tier.ARCHIVE).members()).hasSize(3));
        topology = fixture.proxy().topology(Tier.ARCHIVE);
        assertThat(topology.primary().getPort()).isEqualTo(rs.primary().port());
        assertThat(topology.members().values().stream().filter(m -> m.role() == MemberRole.SECONDARY)).hasSize(2);
        Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
        assertThat(hello.getInteger("maxWireVersion")).isEqualTo(17);
        assertThat(hello.getInteger("logicalSessionTimeoutMinutes")).isEqualTo(30);
        assertThat(client.getClusterDescription().getType()).isEqualTo(ClusterType.SHARDED);
    }

    @Test
    void followsAPrimaryChangeAndRetryableWritesCarryOn() {
        MongoCollection<Document> coll = client.getDatabase("app").getCollection("failover");
        coll.drop();
        coll.insertOne(new Document("_id", "before"));
        int oldPrimary = rs.primary().port();
        rs.stepDown();
        await().atMost(Duration.ofSeconds(15)).until(() -> {
            TierTopology t = fixture.proxy().topology(Tier.ARCHIVE);
            return t.primary() != null && t.primary().getPort() != oldPrimary;
        });
        coll.insertOne(new Document("_id", "after"));
        assertThat(coll.find().into(new ArrayList<>())).extracting(d -> d.get("_id")).containsExactlyInAnyOrder("before", "after");
        assertThat(fixture.proxy().topology(Tier.ARCHIVE).primary().getPort()).isEqualTo(rs.primary().port());
    }

    @Test
    void sessionsGiveReadYourWritesAndTransactionsCommitOrAbort() {
        MongoCollection<Document> coll = client.getDatabase("app").getCollection("txn");
        coll.drop();
        coll.insertOne(new Document("_id", 0));
        try (ClientSession session = client.startSession(ClientSessionOptions.builder().causallyConsistent(true).build())) {
            coll.insertOne(session, new Document("_id", 1));
            assertThat(coll.find(session, Filters.eq("_id", 1)).first()).isNotNull();
            session.withTransaction(() -> {
                coll.insertOne(session, new Document("_id", 2));
                coll.updateOne(session, Filters.eq("_id", 0), new Document("$set", new Document("t", true)));
                return null;
            }, TransactionOptions.builder().writeConcern(WriteConcern.MAJORITY).build());
            session.startTransaction();
            coll.insertOne(session, new Document("_id", 3));
            session.abortTransaction();
        }
        assertThat(coll.find().into(new ArrayList<>())).extracting(d -> d.get("_id")).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(coll.find(Filters.eq("_id", 0)).first()).containsEntry("t", true);
    }

    @Test
    void clientClusterTimeIsNeverForwardedTheTiersOwnIs() throws Exception {
        client.getDatabase("app").getCollection("gossip").insertOne(new Document("x", 1));
        try (WireClient raw = new WireClient(fixture.port())) {
            BsonTimestamp future = new BsonTimestamp((int) (System.currentTimeMillis() / 1000) + 100_000, 1);
            BsonDocument forged = new BsonDocument("clusterTime", future).append("signature",
                    BsonDocument.parse("{hash: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=', subType: '00'}}, keyId: {$numberLong: '1'}}"));
            OpMsg reply = raw.command(BsonDocument.parse("{find: 'gossip', $db: 'app'}").append("$clusterTime", forged));
            assertThat(reply.body().getNumber("ok").intValue()).isEqualTo(1);
            BsonTimestamp returned = reply.body().getDocument("$clusterTime").getTimestamp("clusterTime");
            assertThat(returned.compareTo(future)).isNegative();
            assertThat(reply.body().containsKey("operationTime")).isTrue();
        }
    }

    @Test
    void secondaryReadPreferenceIsServedByASecondary() {
        MongoCollection<Document> coll = client.getDatabase("app").getCollection("prefs");
        coll.drop();
        coll.withWriteConcern(WriteConcern.MAJORITY).insertOne(new Document("_id", "replicated"));
        rs.secondaries().forEach(rs::pauseReplication);
        try {
            coll.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", "primary-only"));
            List<Object> onSecondary = coll.withReadPreference(ReadPreference.secondary()).find().into(new ArrayList<>())
                    .stream().map(d -> d.get("_id")).toList();
            List<Object> onPrimary = coll.find().into(new ArrayList<>()).stream().map(d -> d.get("_id")).toList();
            assertThat(onSecondary).containsExactly("replicated");
            assertThat(onPrimary).containsExactlyInAnyOrder("replicated", "primary-only");
        } finally {
            rs.secondaries().forEach(rs::resumeReplication);
        }
    }

    @Test
    void cursorsOfAClosedClientAreKilledOnTheBackend() {
        MongoCollection<Document> coll = client.getDatabase("app").getCollection("orphans");
        coll.drop();
        coll.insertMany(IntStream.range(0, 50).mapToObj(i -> new Document("_id", i)).toList());
        long open;
        try (MongoClient other = MongoClients.create(fixture.uri())) {
            var cursor = other.getDatabase("app").getCollection("orphans").find().batchSize(5).iterator();
            cursor.next();
            open = countOpenCursors();
            assertThat(open).isPositive();
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(countOpenCursors()).isLessThan(open));
    }

    private static long countOpenCursors() {
        String metrics = scrape();
        return metrics.lines().filter(l -> l.startsWith("thermocline_proxy_open_cursors "))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst().orElse(-1);
    }

    private static String scrape() {
        try {
            var out = new java.io.ByteArrayOutputStream();
            fixture.proxy().metrics().writeTo(out);
            return out.toString();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
