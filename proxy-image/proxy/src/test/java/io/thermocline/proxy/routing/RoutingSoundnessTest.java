package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.AUDIT;
import static io.thermocline.proxy.routing.RoutingFixtures.BOUND;
import static io.thermocline.proxy.routing.RoutingFixtures.C;
import static io.thermocline.proxy.routing.RoutingFixtures.EVENTS;
import static io.thermocline.proxy.routing.RoutingFixtures.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.AgeValue;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The proof checked against a query engine: random documents with the age field in every encoding,
 * a simulated fast tier holding exactly what the coverage bound promises ({@link AgeValue#atOrAfter}),
 * and random filters. Whenever the router says "fast tier", the fast tier's answer must equal the
 * answer over all documents. Runs on an in-process MongoDB wire server on an ephemeral port.
 */
class RoutingSoundnessTest {

    private static final int DOCUMENTS = 400;
    private static final int FILTERS = 1500;
    private static final long DAY = Duration.ofDays(1).toMillis();

    private static MongoServer server;
    private static MongoClient client;
    private static MongoDatabase db;

    @BeforeAll
    static void start() {
        server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", 0);
        InetSocketAddress address = server.getLocalAddress();
        client = MongoClients.create("mongodb://127.0.0.1:" + address.getPort());
        db = client.getDatabase("soundness");
    }

    @AfterAll
    static void stop() {
        client.close();
        server.shutdownNow();
    }

    @Test
    void fastTierAnswerEqualsFullAnswerWheneverRouterSaysFastTier() {
        long seed = Long.getLong("routing.seed", System.nanoTime());
        Random random = new Random(seed);
        MongoCollection<BsonDocument> all = db.getCollection("all_" + Long.toHexString(seed), BsonDocument.class);
        List<BsonDocument> documents = new ArrayList<>();
        for (int i = 0; i < DOCUMENTS; i++) {
            documents.add(randomDocument(i, random));
        }
        all.insertMany(documents);
        int fastRouted = 0;
        for (CollectionPolicy policy : List.of(ORDERS, AUDIT)) {
            MongoCollection<BsonDocument> fast = db.getCollection("fast_" + policy.collection() + "_" + Long.toHexString(seed), BsonDocument.class);
            fast.insertMany(all.find(AgeValue.atOrAfter(policy, C)).into(new ArrayList<>()));
            assertCoverageFilterAgreesWithAgeValue(all, fast, policy, seed);
            for (int f = 0; f < FILTERS; f++) {
                BsonDocument filter = randomFilter(policy.ageField(), 0, random, 0);
                if (!(ReadRouter.route(filter, policy, BOUND) instanceof ReadRoute.FastTier)) {
                    continue;
                }
                Set<BsonValue> expected;
                try {
                    expected = ids(all, filter);
                } catch (MongoException unsupportedByTestServer) {
                    continue;
                }
                fastRouted++;
                Set<BsonValue> actual = ids(fast, filter);
                assertThat(actual)
                        .as("seed %d (rerun with -Drouting.seed=%d), policy %s, filter %s, documents only in the full answer: %s",
                                seed, seed, policy.ageField(), filter.toJson(), missing(all, expected, actual))
                        .isEqualTo(expected);
            }
        }
        // The check is only meaningful if many random filters were actually routed to the fast tier.
        assertThat(fastRouted).as("filters routed to the fast tier, seed %d", seed).isGreaterThan(100);
    }

    @Test
    void idPolicyFastTierAnswerEqualsFullAnswerWheneverRouterSaysFastTier() {
        long seed = Long.getLong("routing.seed", System.nanoTime());
        Random random = new Random(seed);
        MongoCollection<BsonDocument> all = db.getCollection("ids_" + Long.toHexString(seed), BsonDocument.class);
        List<BsonDocument> documents = new ArrayList<>();
        for (int i = 0; i < DOCUMENTS; i++) {
            BsonValue id = switch (random.nextInt(6)) {
                case 0 -> new BsonString("k" + i);
                case 1 -> new BsonInt64(C.toEpochMilli() + i);
                case 2 -> new BsonDateTime(C.toEpochMilli() - 50 * DAY + 1000L * i);
                default -> new BsonObjectId(objectIdNearBound(random));
            };
            documents.add(new BsonDocument("_id", id).append("s", new BsonInt32(random.nextInt(4))));
        }
        all.insertMany(documents);
        MongoCollection<BsonDocument> fast = db.getCollection("fast_ids_" + Long.toHexString(seed), BsonDocument.class);
        fast.insertMany(all.find(AgeValue.atOrAfter(EVENTS, C)).into(new ArrayList<>()));
        assertCoverageFilterAgreesWithAgeValue(all, fast, EVENTS, seed);
        int fastRouted = 0;
        for (int f = 0; f < FILTERS; f++) {
            BsonDocument filter = randomFilter("_id", 4, random, 0);
            if (!(ReadRouter.route(filter, EVENTS, BOUND) instanceof ReadRoute.FastTier)) {
                continue;
            }
            Set<BsonValue> expected;
            try {
                expected = ids(all, filter);
            } catch (MongoException unsupportedByTestServer) {
                continue;
            }
            fastRouted++;
            Set<BsonValue> actual = ids(fast, filter);
            assertThat(actual)
                    .as("seed %d (rerun with -Drouting.seed=%d), _id policy, filter %s, documents only in the full answer: %s",
                            seed, seed, filter.toJson(), missing(all, expected, actual))
                    .isEqualTo(expected);
        }
        assertThat(fastRouted).as("filters routed to the fast tier, seed %d", seed).isGreaterThan(50);
    }

    private static ObjectId objectIdNearBound(Random random) {
        byte[] rest = new byte[8];
        random.nextBytes(rest);
        return new ObjectId(ByteBuffer.allocate(12).putInt((int) nearBound(random).getEpochSecond()).put(rest).array());
    }

    private static void assertCoverageFilterAgreesWithAgeValue(MongoCollection<BsonDocument> all, MongoCollection<BsonDocument> fast,
                                                               CollectionPolicy policy, long seed) {
        Set<BsonValue> byAgeValue = new HashSet<>();
        for (BsonDocument d : all.find()) {
            if (AgeValue.ofDocument(policy, d).filter(a -> a.orderMatchesTime() && BOUND.covers(a.instant())).isPresent()) {
                byAgeValue.add(d.get("_id"));
            }
        }
        assertThat(ids(fast, new BsonDocument())).as("coverage filter vs AgeValue, seed %d, policy %s", seed, policy.ageField())
                .isEqualTo(byAgeValue);
    }

    private static List<String> missing(MongoCollection<BsonDocument> all, Set<BsonValue> expected, Set<BsonValue> actual) {
        List<String> out = new ArrayList<>();
        for (BsonValue id : expected) {
            if (!actual.contains(id)) {
                out.add(all.find(new BsonDocument("_id", id)).first().toJson());
            }
        }
        return out;
    }

    private static Set<BsonValue> ids(MongoCollection<BsonDocument> collection, BsonDocument filter) {
        Set<BsonValue> ids = new HashSet<>();
        for (BsonDocument d : collection.find(filter)) {
            ids.add(d.get("_id"));
        }
        return ids;
    }

    private static BsonDocument randomDocument(int id, Random random) {
        BsonDocument d = new BsonDocument("_id", new BsonInt32(id)).append("s", new BsonInt32(random.nextInt(4)));
        BsonValue created = storedValue(random);
        if (created != null) {
            d.append("createdAt", created);
        }
        switch (random.nextInt(4)) {
            case 0 -> d.append("meta", new BsonDocument("ts", orNull(storedValue(random))));
            case 1 -> d.append("meta", new BsonArray(List.of(new BsonDocument("ts", orNull(storedValue(random))), new BsonDocument("ts", orNull(storedValue(random))))));
            case 2 -> d.append("meta", orNull(storedValue(random)));
            default -> {
            }
        }
        return d;
    }

    private static BsonValue orNull(BsonValue v) {
        return v == null ? BsonNull.VALUE : v;
    }

    /** A stored age-field value in any encoding; null means the field is missing. */
    private static BsonValue storedValue(Random random) {
        // No nested arrays: MongoDB never looks inside them, but the in-process test server's $in does,
        // which would report a difference real MongoDB does not have.
        return switch (random.nextInt(11)) {
            case 0 -> null;
            case 1 -> BsonNull.VALUE;
            case 2 -> BsonBoolean.TRUE;
            case 3 -> new BsonArray(List.of(scalar(random, random.nextInt(6)), scalar(random, random.nextInt(6))));
            default -> scalar(random, random.nextInt(6));
        };
    }

    private static Instant nearBound(Random random) {
        long[] days = {-40, -10, -1, 0, 0, 1, 10, 40};
        long[] jitter = {-1, 0, 0, 1};
        return Instant.ofEpochMilli(C.toEpochMilli() + days[random.nextInt(days.length)] * DAY + jitter[random.nextInt(jitter.length)]);
    }

    /** 0 Date, 1 int64 millis, 2 double millis, 3 ISO string, 4 ObjectId, 5 small int. */
    private static BsonValue scalar(Random random, int kind) {
        Instant t = nearBound(random);
        return switch (kind) {
            case 0 -> new BsonDateTime(t.toEpochMilli());
            case 1 -> new BsonInt64(t.toEpochMilli());
            case 2 -> new BsonDouble(t.toEpochMilli() + 0.5);
            case 3 -> new BsonString(random.nextBoolean() ? t.toString() : t.atOffset(ZoneOffset.ofHours(9)).toString());
            case 4 -> new BsonObjectId(random.nextBoolean() ? AgeValue.smallestObjectIdOfSecond(t.getEpochSecond()) : objectIdNearBound(random));
            default -> new BsonInt32(random.nextInt(1000));
        };
    }

    private static BsonValue operand(int preferred, Random random) {
        // Half of the operands use the encoding the policy reads, so many filters prove something.
        if (random.nextBoolean()) {
            return scalar(random, preferred);
        }
        return switch (random.nextInt(10)) {
            case 0 -> BsonNull.VALUE;
            case 1 -> new BsonArray(List.of(scalar(random, 0)));
            default -> scalar(random, random.nextInt(5));
        };
    }

    private static BsonDocument randomFilter(String ageField, int preferred, Random random, int depth) {
        int choice = random.nextInt(depth >= 2 ? 3 : 8);
        return switch (choice) {
            case 0, 1 -> ageLeaf(ageField, preferred, random);
            case 2 -> new BsonDocument("s", new BsonDocument(random.nextBoolean() ? "$gte" : "$lt", new BsonInt32(random.nextInt(4))));
            case 3 -> new BsonDocument("$and", branches(ageField, preferred, random, depth));
            case 4 -> new BsonDocument("$or", branches(ageField, preferred, random, depth));
            case 5 -> new BsonDocument("$nor", branches(ageField, preferred, random, depth));
            case 6 -> ageLeaf(ageField, preferred, random).append("s", new BsonInt32(random.nextInt(4)));
            default -> new BsonDocument("$expr", new BsonDocument("$gte",
                    new BsonArray(List.of(new BsonString("$" + ageField), scalar(random, 0)))));
        };
    }

    private static BsonArray branches(String ageField, int preferred, Random random, int depth) {
        BsonArray out = new BsonArray();
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            out.add(randomFilter(ageField, preferred, random, depth + 1));
        }
        return out;
    }

    private static BsonDocument ageLeaf(String ageField, int preferred, Random random) {
        BsonValue v = operand(preferred, random);
        BsonValue condition = switch (random.nextInt(14)) {
            case 0, 1 -> new BsonDocument("$gte", v);
            case 2 -> new BsonDocument("$gt", v);
            case 3 -> v;
            case 4 -> new BsonDocument("$eq", v);
            case 5 -> new BsonDocument("$lt", v);
            case 6 -> new BsonDocument("$gte", v).append("$lt", operand(preferred, random));
            case 7 -> new BsonDocument("$in", new BsonArray(List.of(v, operand(preferred, random))));
            case 8 -> new BsonDocument("$ne", v);
            case 9 -> new BsonDocument("$not", new BsonDocument("$lt", v));
            case 10 -> new BsonDocument("$exists", BsonBoolean.TRUE);
            case 11 -> new BsonDocument("$elemMatch", new BsonDocument("$gte", v));
            case 12 -> new BsonDocument("$nin", new BsonArray(List.of(v)));
            default -> new BsonDocument("$gte", v).append("$lte", operand(preferred, random));
        };
        return new BsonDocument(ageField, condition);
    }
}
