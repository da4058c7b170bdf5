package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.mongodb.MongoCommandException;
import com.mongodb.client.model.Filters;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A {@code writeConcern} mongod refuses is refused by the proxy with mongod's code, before anything is written, on
 * every tiered write path: an update and a delete of a cold document (guarded, in the proxy's own transaction, where
 * the write concern used to be replaced by the proxy's floor) and an insert of a new one (forwarded). One mongod
 * accepts is accepted: {@code wtimeout} of another type counts as none, and a tag the replica set does not define lets
 * the write stand with {@code writeConcernError} 79, as mongod's reply does.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class InvalidWriteConcernTest {

    static TieredStack stack;
    static final Instant NOW = Instant.now();
    static final AtomicInteger IDS = new AtomicInteger(1000);

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20));
        stack.startFeeder();
        stack.coverSince(NOW.minus(Duration.ofHours(1)));
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static BsonDocument wc(String json) {
        return BsonDocument.parse("{wc: " + json + "}");
    }

    /** Write concerns mongod refuses when it parses the command (write_concern_options, its IDL), with the code it gives. */
    static Stream<Arguments> refused() {
        return Stream.of(
                arguments("{w: -1}", 9, "w has to be a non-negative number"),
                arguments("{w: 51}", 9, "w has to be a non-negative number"),
                arguments("{w: true}", 9, "w has to be a number, string, or object"),
                arguments("{w: {}}", 9, "tagged write concern requires tags"),
                arguments("{w: {dc: 'east'}}", 9, "tags must be a single level document with only number values"),
                arguments("{j: 'yes'}", 14, "BSON field 'writeConcern.j' is the wrong type 'string'"),
                arguments("{w: 'majority', fsync: 'yes'}", 14, "BSON field 'writeConcern.fsync' is the wrong type"),
                arguments("{j: true, fsync: true}", 9, "fsync and j options cannot be used together"),
                arguments(
                        "{w: 'majority', wtimout: 100}",
                        40415,
                        "BSON field 'writeConcern.wtimout' is an unknown field"),
                arguments("'majority'", 14, "\"writeConcern\" had the wrong type. Expected object, found string"));
    }

    @ParameterizedTest(name = "writeConcern {0}: {1}")
    @MethodSource("refused")
    void anInvalidWriteConcernIsRefusedBeforeAnythingIsWritten(String writeConcern, int code, String message) {
        BsonValue concern = wc(writeConcern).get("wc");
        int cold = IDS.incrementAndGet();
        stack.archiveOrders().insertOne(order(cold, NOW.minus(Duration.ofHours(5)), "cold"));
        int fresh = IDS.incrementAndGet();

        List<BsonDocument> writes = List.of(
                update(cold, "updated"),
                new BsonDocument("delete", new BsonString("orders"))
                        .append(
                                "deletes",
                                new BsonArray(
                                        List.of(new BsonDocument("q", new BsonDocument("_id", new BsonInt32(cold)))
                                                .append("limit", new BsonInt32(1))))),
                new BsonDocument("findAndModify", new BsonString("orders"))
                        .append("query", new BsonDocument("_id", new BsonInt32(cold)))
                        .append("update", set("found and modified")),
                new BsonDocument("insert", new BsonString("orders"))
                        .append("documents", new BsonArray(List.of(order(fresh, NOW, "inserted")))));
        for (BsonDocument write : writes) {
            BsonDocument reply = run(write.append("writeConcern", concern));
            assertThat(reply.getNumber("ok").intValue())
                    .as("%s refused: %s", write.getFirstKey(), reply)
                    .isZero();
            assertThat(reply.getNumber("code").intValue())
                    .as("%s: %s", write.getFirstKey(), reply)
                    .isEqualTo(code);
            assertThat(reply.getString("errmsg").getValue())
                    .as("%s", write.getFirstKey())
                    .contains(message);
        }
        assertThat(state(cold)).as("the cold document is untouched").isEqualTo("cold");
        assertThat(stack.fastOrders().find(Filters.eq("_id", cold)).first())
                .as("nothing copied into the fast tier")
                .isNull();
        assertThat(stack.orders().find(Filters.eq("_id", fresh)).first())
                .as("nothing inserted")
                .isNull();
    }

    /** Write concerns mongod accepts though they look wrong: the write stands, with what mongod's reply says. */
    static Stream<Arguments> accepted() {
        return Stream.of(
                arguments("{wtimeout: 'x'}", null),
                arguments("{w: 'majority', wtimeout: 'x'}", null),
                arguments("{}", null),
                arguments("{j: 1}", null),
                arguments("{w: 1.0, j: false, wOpTime: 'ignored'}", null),
                arguments("{w: 'nonexistentTag'}", 79));
    }

    @ParameterizedTest(name = "writeConcern {0}")
    @MethodSource("accepted")
    void aWriteConcernMongodAcceptsLetsTheWriteStand(String writeConcern, Integer writeConcernError) {
        BsonValue concern = wc(writeConcern).get("wc");
        int cold = IDS.incrementAndGet();
        stack.archiveOrders().insertOne(order(cold, NOW.minus(Duration.ofHours(5)), "cold"));
        BsonDocument reply = run(update(cold, "updated").append("writeConcern", concern));
        assertThat(reply.getNumber("ok").intValue()).as("%s", reply).isEqualTo(1);
        assertThat(reply.getNumber("nModified").intValue()).as("%s", reply).isEqualTo(1);
        assertThat(state(cold)).isEqualTo("updated");
        if (writeConcernError == null) {
            assertThat(reply.containsKey("writeConcernError")).as("%s", reply).isFalse();
        } else {
            assertThat(reply.getDocument("writeConcernError").getNumber("code").intValue())
                    .as("%s", reply)
                    .isEqualTo(writeConcernError);
        }
    }

    static BsonDocument order(int id, Instant createdAt, String state) {
        return SessionConsistencyTest.order(id, createdAt, state);
    }

    private static BsonDocument update(int id, String state) {
        return new BsonDocument("update", new BsonString("orders"))
                .append(
                        "updates",
                        new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", new BsonInt32(id)))
                                .append("u", set(state))
                                .append("upsert", BsonBoolean.FALSE))));
    }

    private static BsonDocument set(String state) {
        return new BsonDocument("$set", new BsonDocument("state", new BsonString(state)));
    }

    private static BsonDocument run(BsonDocument command) {
        try {
            return stack.client.getDatabase("shop").runCommand(command, BsonDocument.class);
        } catch (MongoCommandException e) {
            return e.getResponse();
        }
    }

    private static String state(int id) {
        BsonDocument d = stack.orders().find(Filters.eq("_id", id)).first();
        return d == null ? null : d.getString("state").getValue();
    }
}
