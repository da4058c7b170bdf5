package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client's write concern on every tiered write path, on one-member tiers: {@code w: 3} cannot be
 * met, so each write stands and its reply carries mongod's {@code writeConcernError} (code 100,
 * UnsatisfiableWriteConcern, the client's write concern echoed in errInfo) next to its own result;
 * {@code w: 0} writes are executed though nobody hears back. Documents held by the fast tier (hot),
 * by the archive only (cold) and by neither (upserts) take the different paths.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteConcernTest {

    static TieredStack stack;
    static final Instant NOW = Instant.now();
    static final BsonDocument W3 = new BsonDocument("w", new BsonInt32(3));

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

    private static BsonDocument hot(int id) {
        BsonDocument d = SessionConsistencyTest.order(id, NOW, "hot");
        stack.fastOrders().insertOne(d);
        return d;
    }

    private static BsonDocument cold(int id) {
        BsonDocument d = SessionConsistencyTest.order(id, NOW.minus(Duration.ofHours(5)), "cold");
        stack.archiveOrders().insertOne(d);
        return d;
    }

    /** The command's raw reply through the proxy (an error reply too). */
    private static BsonDocument run(BsonDocument command) {
        try {
            return stack.client.getDatabase("shop").runCommand(command.append("writeConcern", W3), BsonDocument.class);
        } catch (MongoCommandException e) {
            return e.getResponse();
        }
    }

    /** mongod's reply to a write whose w cannot be met: ok 1, the write's result, and the unmet write concern. */
    private static void unsatisfiable(BsonDocument reply) {
        assertThat(reply.getNumber("ok").intValue()).as("the write stands: %s", reply).isEqualTo(1);
        assertThat(reply.isDocument("writeConcernError")).as("a writeConcernError: %s", reply).isTrue();
        BsonDocument wce = reply.getDocument("writeConcernError");
        assertThat(wce.getNumber("code").intValue()).isEqualTo(100);
        assertThat(wce.getString("codeName").getValue()).isEqualTo("UnsatisfiableWriteConcern");
        assertThat(wce.getString("errmsg").getValue()).isEqualTo("Not enough data-bearing nodes");
        assertThat(wce.getDocument("errInfo").getDocument("writeConcern").get("w")).isEqualTo(new BsonInt32(3));
        assertThat(reply.containsKey("writeErrors")).as("no write error: %s", reply).isFalse();
    }

    private static BsonDocument update(BsonDocument q, BsonDocument u, boolean upsert, boolean multi) {
        return new BsonDocument("update", new BsonString("orders")).append("updates", new BsonArray(List.of(
                new BsonDocument("q", q).append("u", u).append("upsert", BsonBoolean.valueOf(upsert)).append("multi", BsonBoolean.valueOf(multi)))));
    }

    private static BsonDocument delete(BsonDocument q, int limit) {
        return new BsonDocument("delete", new BsonString("orders")).append("deletes", new BsonArray(List.of(
                new BsonDocument("q", q).append("limit", new BsonInt32(limit)))));
    }

    private static BsonDocument byId(int id) {
        return new BsonDocument("_id", new BsonInt32(id));
    }

    private static BsonDocument set(String state) {
        return new BsonDocument("$set", new BsonDocument("state", new BsonString(state)));
    }

    private static String state(int id) {
        BsonDocument d = stack.orders().find(Filters.eq("_id", id)).first();
        return d == null ? null : d.getString("state").getValue();
    }

    @Test
    void insertsReportTheUnmetWriteConcern() {
        BsonDocument reply = run(new BsonDocument("insert", new BsonString("orders"))
                .append("documents", new BsonArray(List.of(SessionConsistencyTest.order(100, NOW, "new")))));
        unsatisfiable(reply);
        assertThat(reply.getNumber("n").intValue()).isEqualTo(1);
    }

    @Test
    void aGuardedWriteThatFailsReportsItsWriteErrorsAndTheUnmetWriteConcern() {
        cold(110);
        BsonDocument reply = run(new BsonDocument("insert", new BsonString("orders"))
                .append("documents", new BsonArray(List.of(SessionConsistencyTest.order(110, NOW, "duplicate")))));
        assertThat(reply.getArray("writeErrors").get(0).asDocument().getNumber("code").intValue()).as("%s", reply).isEqualTo(11000);
        assertThat(reply.getDocument("writeConcernError").getNumber("code").intValue()).as("%s", reply).isEqualTo(100);
        assertThat(reply.getNumber("n").intValue()).isZero();
    }

    @Test
    void updatesByIdReportTheUnmetWriteConcern() {
        hot(200);
        cold(201);
        for (int id : new int[] {200, 201}) {
            BsonDocument reply = run(update(byId(id), set("w3"), false, false));
            unsatisfiable(reply);
            assertThat(reply.getNumber("nModified").intValue()).as("%s: %s", id, reply).isEqualTo(1);
            assertThat(state(id)).isEqualTo("w3");
        }
        BsonDocument upsert = run(update(byId(202), set("upserted"), true, false));
        unsatisfiable(upsert);
        assertThat(upsert.getArray("upserted")).hasSize(1);
        assertThat(state(202)).isEqualTo("upserted");
    }

    @Test
    void filterUpdatesOverBothTiersReportTheUnmetWriteConcern() {
        hot(300);
        stack.fastOrders().updateOne(Filters.eq("_id", 300), Updates.set("tag", "f"));
        cold(301);
        stack.archiveOrders().updateOne(Filters.eq("_id", 301), Updates.set("tag", "f"));
        BsonDocument reply = run(update(new BsonDocument("tag", new BsonString("f")), set("many"), false, true));
        unsatisfiable(reply);
        assertThat(reply.getNumber("nModified").intValue()).isEqualTo(2);
    }

    @Test
    void deletesReportTheUnmetWriteConcern() {
        hot(400);
        cold(401);
        for (int id : new int[] {400, 401}) {
            BsonDocument reply = run(delete(byId(id), 1));
            unsatisfiable(reply);
            assertThat(reply.getNumber("n").intValue()).as("%s: %s", id, reply).isEqualTo(1);
            assertThat(state(id)).isNull();
        }
        hot(402);
        cold(403);
        BsonDocument many = run(delete(new BsonDocument("_id", new BsonDocument("$in", new BsonArray(List.of(new BsonInt32(402),
                new BsonInt32(403))))), 0));
        unsatisfiable(many);
        assertThat(many.getNumber("n").intValue()).isEqualTo(2);
    }

    @Test
    void findAndModifyReportsTheUnmetWriteConcern() {
        hot(500);
        cold(501);
        for (int id : new int[] {500, 501}) {
            BsonDocument reply = run(new BsonDocument("findAndModify", new BsonString("orders")).append("query", byId(id))
                    .append("update", set("fam")));
            unsatisfiable(reply);
            assertThat(reply.getDocument("lastErrorObject").getNumber("n").intValue()).as("%s: %s", id, reply).isEqualTo(1);
            assertThat(state(id)).isEqualTo("fam");
        }
        BsonDocument upsert = run(new BsonDocument("findAndModify", new BsonString("orders")).append("query", byId(502))
                .append("update", set("fam")).append("upsert", BsonBoolean.TRUE).append("new", BsonBoolean.TRUE));
        unsatisfiable(upsert);
        assertThat(state(502)).isEqualTo("fam");
        hot(503);
        cold(504);
        for (int id : new int[] {503, 504}) {
            BsonDocument reply = run(new BsonDocument("findAndModify", new BsonString("orders")).append("query", byId(id))
                    .append("remove", BsonBoolean.TRUE));
            unsatisfiable(reply);
            assertThat(reply.getDocument("value").get("_id")).isEqualTo(new BsonInt32(id));
            assertThat(state(id)).isNull();
        }
    }

    @Test
    void unacknowledgedWritesAreExecutedOnEveryPath() throws InterruptedException {
        var w0 = stack.orders().withWriteConcern(WriteConcern.UNACKNOWLEDGED);
        hot(600);
        cold(601);
        cold(602);
        cold(603);
        hot(604);
        w0.updateOne(Filters.eq("_id", 600), Updates.set("state", "w0"));
        w0.updateOne(Filters.eq("_id", 601), Updates.set("state", "w0"));
        w0.updateOne(Filters.eq("_id", 605), Updates.set("state", "w0"), new com.mongodb.client.model.UpdateOptions().upsert(true));
        w0.findOneAndUpdate(Filters.eq("_id", 602), Updates.set("state", "w0"));
        w0.deleteOne(Filters.eq("_id", 603));
        w0.deleteOne(Filters.eq("_id", 604));
        w0.insertOne(new BsonDocument("_id", new BsonInt32(606)).append("createdAt", new BsonDateTime(NOW.toEpochMilli()))
                .append("state", new BsonString("w0")));
        Supplier<List<String>> states = () -> java.util.stream.IntStream.rangeClosed(600, 606).mapToObj(WriteConcernTest::state).toList();
        Awaitility.await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> assertThat(states.get())
                .containsExactly("w0", "w0", "w0", null, null, "w0", "w0"));
        assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test").sync(Duration.ofSeconds(10)))
                .isPresent();
        assertThat(stack.archiveOrders().find(Filters.eq("_id", 601)).first().getString("state").getValue())
                .as("mirrored like any acknowledged write").isEqualTo("w0");
    }
}
