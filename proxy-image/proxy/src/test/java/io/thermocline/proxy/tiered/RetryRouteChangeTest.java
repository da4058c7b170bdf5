package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import io.thermocline.proxy.ExternalClient;
import io.thermocline.proxy.chaos.DroppingRelay;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.tiered.RetryAcrossReplicasTest.Raw;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.state.CoverageBound;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A retryable update, upsert or findAndModify whose attempts take different paths (issue 23, item 1): the
 * first forwarded to the fast tier as sent (its filter provably hot), then the coverage bound moves past
 * the filter's age bound and the retry (same lsid and txnNumber, on the other proxy replica) is resolved
 * and guarded; and the other way round, a guarded attempt and a forwarded one arriving after it. Each
 * runs once and every attempt gets the first one's answer. On the code before, the retry ran again
 * ({@code n} 2) and so did the late forwarded attempt.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RetryRouteChangeTest {

    static TieredStack stack;
    static TieredRouting secondRouting;
    static ProxyServer second;
    static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    /** The filters' age bound: inside the window, covered by the wide bound, not by the narrow one. */
    static final Instant SINCE = NOW.minus(Duration.ofMinutes(20));

    static final Instant WIDE = NOW.minus(Duration.ofHours(1));
    static final Instant NARROW = NOW.minus(Duration.ofMinutes(5));

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20));
        stack.startFeeder();
        second = stack.anotherProxy("tiered-test-1");
        secondRouting = stack.moreRoutings.get(0);
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    @BeforeEach
    void wideBound() throws InterruptedException {
        bound(WIDE);
    }

    /** Publishes the coverage bound and waits until both replicas route by it. */
    static void bound(Instant oldestCovered) throws InterruptedException {
        new MetadataStore(stack.fastWorkers)
                .updateNamespace(TieredStack.POLICY.namespace(), s -> s.withCoverage(oldestCovered));
        // the deadline only bounds a replica that never follows the bound: a loaded machine only makes them slower
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        CoverageBound wanted = CoverageBound.from(oldestCovered);
        while (!List.of(stack.routing, secondRouting).stream()
                .allMatch(
                        r -> r.table().coverage(TieredStack.POLICY.namespace()).equals(wanted))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the proxies did not follow the bound within 60 s");
            }
            Thread.sleep(20);
        }
    }

    private static BsonDocument session(BsonDocument command, UUID lsid, long txnNumber) {
        return command.append("lsid", new BsonDocument("id", new BsonBinary(lsid, UuidRepresentation.STANDARD)))
                .append("txnNumber", new BsonInt64(txnNumber))
                .append("$db", new BsonString("shop"));
    }

    private static String hot(String tag) {
        return "{tag: '" + tag + "', createdAt: {$gte: {$date: '" + SINCE + "'}}}";
    }

    private static void recent(int id, String tag) {
        stack.orders()
                .insertOne(SessionConsistencyTest.order(id, NOW.minus(Duration.ofMinutes(10)), "recent")
                        .append("tag", new BsonString(tag))
                        .append("n", new BsonInt32(0)));
    }

    private static int counter(String tag) {
        BsonDocument d = stack.fastOrders().find(Filters.eq("tag", tag)).first();
        return d == null ? -1 : d.getNumber("n").intValue();
    }

    /** The first attempt forwarded while the filter is provably hot, the retry on the other replica after the bound moved. */
    private static BsonDocument[] forwardedThenGuarded(String command, UUID lsid) throws Exception {
        try (Raw a = new Raw(stack.proxy.port());
                Raw b = new Raw(second.port())) {
            BsonDocument first = a.command(session(BsonDocument.parse(command), lsid, 1));
            bound(NARROW); // the document need not move: only the proof of the retry's route changes
            BsonDocument retry = b.command(session(BsonDocument.parse(command), lsid, 1));
            return new BsonDocument[] {first, retry};
        }
    }

    @Test
    void updateForwardedThenRetriedGuardedRunsOnce() throws Exception {
        recent(1001, "route-update");
        BsonDocument[] replies = forwardedThenGuarded(
                "{update: 'orders', updates: [{q: " + hot("route-update") + ", u: {$inc: {n: 1}}}]}",
                UUID.randomUUID());
        assertThat(replies[0].getNumber("nModified").intValue()).isEqualTo(1);
        assertThat(replies[1].getNumber("n").intValue()).as("the retry's n").isEqualTo(1);
        assertThat(replies[1].getNumber("nModified").intValue())
                .as("the retry's nModified")
                .isEqualTo(1);
        assertThat(counter("route-update")).as("the $inc applied once").isEqualTo(1);
    }

    @Test
    void upsertForwardedThenRetriedGuardedRunsOnce() throws Exception {
        BsonDocument[] replies = forwardedThenGuarded(
                "{update: 'orders', updates: [{q: " + hot("route-upsert")
                        + ", u: {$inc: {n: 1}, $setOnInsert: {createdAt: {$date: '" + NOW.minus(Duration.ofMinutes(10))
                        + "'}}}, upsert: true}]}",
                UUID.randomUUID());
        assertThat(replies[0].getArray("upserted")).hasSize(1);
        assertThat(replies[1].getArray("upserted", new BsonArray()))
                .as("the retry's reply: " + replies[1].toJson())
                .isEqualTo(replies[0].getArray("upserted"));
        assertThat(stack.fastOrders().countDocuments(Filters.eq("tag", "route-upsert")))
                .isEqualTo(1);
        assertThat(counter("route-upsert"))
                .as("upserted once, not incremented again")
                .isEqualTo(1);
    }

    @Test
    void findAndModifyForwardedThenRetriedGuardedRunsOnce() throws Exception {
        recent(1003, "route-fam");
        BsonDocument[] replies = forwardedThenGuarded(
                "{findAndModify: 'orders', query: " + hot("route-fam") + ", update: {$inc: {n: 1}}, new: true}",
                UUID.randomUUID());
        assertThat(replies[0].getDocument("value").getNumber("n").intValue()).isEqualTo(1);
        assertThat(replies[1].isDocument("value"))
                .as("the retry's reply: " + replies[1].toJson())
                .isTrue();
        assertThat(replies[1].getDocument("value").getNumber("n").intValue())
                .as("the retry's value")
                .isEqualTo(1);
        assertThat(counter("route-fam")).as("the $inc applied once").isEqualTo(1);
    }

    /**
     * The other order, racing for real: an attempt on one replica reads no recorded reply and decides to
     * forward (the filter provably hot, the bound it read wide); before it reaches the fast tier the bound
     * narrows and the retry runs guarded on the other replica and commits. The forwarded attempt then runs
     * nothing and gets the guarded attempt's reply (on the code before, it ran the $inc a second time).
     */
    @Test
    void forwardedAttemptOvertakenByAGuardedRetryRunsNothing() throws Exception {
        recent(1004, "route-late");
        recent(1005, "route-late-fam");
        String update = "{update: 'orders', updates: [{q: " + hot("route-late") + ", u: {$inc: {n: 1}}}]}";
        String fam =
                "{findAndModify: 'orders', query: " + hot("route-late-fam") + ", update: {$inc: {n: 1}}, new: true}";
        BsonDocument[] late = overtaken(update, UUID.randomUUID());
        assertThat(late[0].getNumber("nModified").intValue())
                .as("the guarded retry: " + late[0].toJson())
                .isEqualTo(1);
        assertThat(late[1].getNumber("n").intValue())
                .as("the overtaken attempt's reply: " + late[1].toJson())
                .isEqualTo(1);
        assertThat(late[1].getNumber("nModified").intValue()).isEqualTo(1);
        assertThat(late[1].containsKey("upserted"))
                .as("no claim leaks into the reply")
                .isFalse();
        assertThat(counter("route-late")).as("the $inc applied once").isEqualTo(1);
        bound(WIDE);
        BsonDocument[] lateFam = overtaken(fam, UUID.randomUUID());
        assertThat(lateFam[1].getDocument("value", new BsonDocument()))
                .as("the overtaken findAndModify's reply: " + lateFam[1].toJson())
                .isEqualTo(lateFam[0].getDocument("value"));
        assertThat(counter("route-late-fam"))
                .as("the findAndModify applied once")
                .isEqualTo(1);
    }

    /** Sends {@code command} to the first replica; once it is about to forward it, the bound narrows and the second replica runs it. */
    private static BsonDocument[] overtaken(String command, UUID lsid) throws Exception {
        BsonDocument[] replies = new BsonDocument[2];
        AtomicBoolean once = new AtomicBoolean();
        try (Raw a = new Raw(stack.proxy.port());
                Raw b = new Raw(second.port())) {
            stack.writeRaces.set(point -> {
                if (point == WriteRaces.Point.RETRY_FORWARDING && once.compareAndSet(false, true)) {
                    try {
                        bound(NARROW);
                        replies[0] = b.command(session(BsonDocument.parse(command), lsid, 5));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            try {
                replies[1] = a.command(session(BsonDocument.parse(command), lsid, 5));
            } finally {
                stack.writeRaces.set(WriteRaces.NONE);
            }
        }
        assertThat(once).as("the race happened").isTrue();
        return replies;
    }

    /**
     * An unmodified Java driver ({@code retryWrites=true}) behind a relay that forwards its {@code updateOne},
     * drops the reply and refuses connections for 3 s, then relays to the other proxy replica; meanwhile the
     * bound moves past the filter. The driver's retry goes to the other replica on the guarded path: the
     * {@code $inc} applies once and the driver reports one match and one change (on the code before, n 2).
     */
    @Test
    void javaDriverRetryBehindADroppingRelayAppliesOnce() throws Exception {
        recent(1010, "relay-java");
        try (DroppingRelay relay = new DroppingRelay(List.of(stack.proxy.port(), second.port()));
                MongoClient client = MongoClients.create(
                        relay.uri("retryWrites=true&serverSelectionTimeoutMS=30000&heartbeatFrequencyMS=500"))) {
            MongoCollection<BsonDocument> orders =
                    client.getDatabase("shop").getCollection("orders", BsonDocument.class);
            assertThat(orders.find(Filters.eq("_id", 1010)).first()).isNotNull(); // connected before the outage
            // refused until both replicas route by the narrow bound (the driver's retry waits up to
            // serverSelectionTimeoutMS)
            CountDownLatch dropped = relay.dropReplyTo("relay-java", Duration.ofSeconds(25));
            CompletableFuture<UpdateResult> update = CompletableFuture.supplyAsync(
                    () -> orders.updateOne(BsonDocument.parse(hot("relay-java")), Updates.inc("n", 1)));
            assertThat(dropped.await(60, TimeUnit.SECONDS))
                    .as("the first attempt's reply was dropped")
                    .isTrue();
            bound(NARROW);
            assertThat(update).as("the retry waits for the relay").isNotDone();
            relay.endRefusal();
            UpdateResult result = update.get(90, TimeUnit.SECONDS);
            assertThat(result.getMatchedCount()).isEqualTo(1);
            assertThat(result.getModifiedCount()).isEqualTo(1);
            assertThat(relay.drops()).isEqualTo(1);
        }
        assertThat(counter("relay-java")).as("the $inc applied once").isEqualTo(1);
    }

    /** The same with pymongo (Debian's python3-pymongo), the driver of the report. */
    @Test
    void pymongoRetryBehindADroppingRelayAppliesOnce() throws Exception {
        String python = ExternalClient.pymongoPython();
        assumeTrue(
                python != null,
                "pymongo not found: apt-get install -y python3-pymongo (.ci/run does), or set THERMOCLINE_PYTHON");
        recent(1011, "relay-python");
        Path script = Files.createTempFile("thermocline-retry", ".py");
        Files.writeString(script, """
                import sys, json, datetime, pymongo
                client = pymongo.MongoClient(sys.argv[1], retryWrites=True, serverSelectionTimeoutMS=30000, heartbeatFrequencyMS=500)
                orders = client.shop.orders
                assert orders.find_one({'_id': 1011}) is not None
                since = datetime.datetime.utcfromtimestamp(int(sys.argv[2]) / 1000.0)
                r = orders.update_one({'tag': 'relay-python', 'createdAt': {'$gte': since}}, {'$inc': {'n': 1}})
                print(json.dumps({'matched': r.matched_count, 'modified': r.modified_count}))
                """);
        try (DroppingRelay relay = new DroppingRelay(List.of(stack.proxy.port(), second.port()))) {
            CountDownLatch dropped = relay.dropReplyTo("relay-python", Duration.ofSeconds(25));
            CompletableFuture<ExternalClient.Result> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return ExternalClient.run(
                            List.of(python, script.toString(), relay.uri(""), Long.toString(SINCE.toEpochMilli())));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(dropped.await(60, TimeUnit.SECONDS))
                    .as("the first attempt's reply was dropped")
                    .isTrue();
            bound(NARROW);
            assertThat(run).as("the retry waits for the relay").isNotDone();
            relay.endRefusal();
            ExternalClient.Result r = run.get(120, TimeUnit.SECONDS);
            assertThat(r.exit()).as(r.output()).isZero();
            assertThat(r.output()).contains("{\"matched\": 1, \"modified\": 1}");
            assertThat(relay.drops()).isEqualTo(1);
        } finally {
            Files.deleteIfExists(script);
        }
        assertThat(counter("relay-python")).as("the $inc applied once").isEqualTo(1);
    }
}
