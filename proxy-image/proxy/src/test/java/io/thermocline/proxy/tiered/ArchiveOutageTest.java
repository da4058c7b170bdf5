package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.tiering.backup.BackupPoint;
import io.thermocline.tiering.backup.BackupPointStep;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An archive outage through the proxy (issue 24, docs/faults.md): what the fast tier proves keeps being served,
 * what needs the archive is refused retryably (code 6, naming the archive), the feeder queues and catches up when
 * the archive is back, and no acknowledged write is lost. Prints, per kind of operation, how many were served and
 * refused and how long each took (the numbers in docs/benchmarks/archive-outage.md; no assertion on a time).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ArchiveOutageTest {

    static final int ROUNDS = 5;
    /** Documents only the archive holds: 100 is read, 101 updated, 102 deleted, 103 found and modified or removed. */
    static final java.util.List<Integer> COLD = java.util.List.of(100, 101, 102, 103);
    /** The first of the hot documents the outage rounds delete, one per round. */
    static final int HOT_DELETED = 10;
    /** The first of the hot documents the outage rounds remove with findAndModify, one per round. */
    static final int HOT_REMOVED = 20;
    /** Every command a client or the proxy sends: a member that answers none of them is, to everyone, down. */
    static final String ALL_COMMANDS =
            "['hello', 'isMaster', 'ismaster', 'ping', 'buildInfo', 'find', 'aggregate', 'count', 'distinct',"
                    + " 'insert', 'update', 'delete', 'findAndModify', 'getMore', 'killCursors', 'endSessions', 'listIndexes',"
                    + " 'listCollections', 'commitTransaction', 'abortTransaction', 'saslStart', 'saslContinue']";

    TieredStack stack;
    /** A replica re-reading the shared state every 2 s: the stack's own (50 ms) goes stale on a loaded machine, and routes all to the archive. */
    io.thermocline.proxy.server.ProxyServer proxy;

    MongoClient client;
    MongoCollection<BsonDocument> orders;
    final Instant now = Instant.now();
    /** What every acknowledged write left in each document: checked in the archive after the outage. */
    final Map<Integer, String> acknowledged = new LinkedHashMap<>();
    /** Documents whose delete was acknowledged: gone from the archive after the outage. */
    final java.util.Set<Integer> deleted = new java.util.TreeSet<>();

    final Map<String, Tally> tallies = new LinkedHashMap<>();

    @BeforeEach
    void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20));
        stack.startFeeder();
        // a stall confirmed after 4 s, not 10: the paused archive's rounds start sooner and its gaps are shorter
        proxy = stack.anotherProxy(
                "outage-test", Duration.ofSeconds(2), s -> s.withStallConfirmed(StalledArchiveTest.STALL_CONFIRMED));
        stack.coverSince(
                now.minus(Duration.ofMinutes(50)), proxy.tieredRouting().orElseThrow());
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true&retryReads=true");
        orders = client.getDatabase("shop").getCollection("orders", BsonDocument.class);
        for (int id = 1; id <= 3; id++) {
            orders.insertOne(TieredProxyTest.order(id, now, "hot"));
            acknowledged.put(id, "hot");
        }
        for (int round = 0;
                round < ROUNDS;
                round++) { // hot, outside the hot range read's 10 minutes: deleted one a round
            orders.insertOne(TieredProxyTest.order(HOT_DELETED + round, now.minus(Duration.ofMinutes(20)), "hot"));
            orders.insertOne(TieredProxyTest.order(HOT_REMOVED + round, now.minus(Duration.ofMinutes(20)), "hot"));
        }
        for (int id : COLD) {
            stack.archiveOrders().insertOne(TieredProxyTest.order(id, now.minus(Duration.ofDays(3)), "cold"));
        }
        assertThat(new MirrorBarrier(stack.fastWorkers, new MetadataStore(stack.fastWorkers), "test")
                        .sync(Duration.ofSeconds(30)))
                .isPresent();
    }

    @AfterEach
    void stop() throws Exception {
        archiveBack();
        client.close();
        stack.close();
    }

    @Test
    void aStoppedArchiveLeavesHotDataServedRefusesTheRestRetryablyAndLosesNothing() throws Exception {
        failArchive("{closeConnection: true, failCommands: " + ALL_COMMANDS + "}");
        awaitOutOfService();
        outageRounds("paid", 200);
        assertThat(proxy.readiness().ready()).as("the hot data is still served").isTrue();
        assertThat(proxy.readiness().reason()).contains("degraded", "archive");
        awaitFeederReports("unreachable");
        recoverAndCheck("stopped");
    }

    @Test
    void anArchiveThatRefusesWritesLeavesHotWritesQueuedInTheFastTierAndLosesNothing() throws Exception {
        failArchive("{errorCode: 14031, failCommands: ['insert', 'update', 'delete', 'findAndModify']}");
        for (int round = 0; round < ROUNDS; round++) {
            int id = 1 + round % 3;
            String state = "paid-" + round;
            served(
                    "hot point read",
                    () -> assertThat(orders.find(Filters.eq("_id", id)).first()).isNotNull());
            served("hot update", () -> {
                assertThat(orders.updateOne(Filters.eq("_id", id), Updates.set("state", state))
                                .getModifiedCount())
                        .isEqualTo(1);
                acknowledged.put(id, state);
            });
            served(
                    "cold point read",
                    () -> assertThat(orders.find(Filters.eq("_id", 100)).first())
                            .isNotNull());
        }
        awaitFeederReports("refusing_writes");
        assertThat(new MetadataStore(stack.fastWorkers).feederHealth().deadLetters())
                .as("trouble of the whole archive, not dead letters")
                .isZero();
        // the hot updates are in no archive backup, and a full disk does not pass by waiting: refused at once, with the
        // cause
        BackupPoint.Refusal refusal = catchThrowableOfType(
                BackupPoint.Refusal.class,
                () -> new BackupPoint(stack.fastWorkers, stack.archiveWorkers, "outage-test", Clock.systemUTC())
                        .await(Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofSeconds(1), line -> {}));
        assertThat(refusal).as("backup-point while the archive refuses writes").isNotNull();
        assertThat(refusal.reason()).isEqualTo(BackupPointStep.Reason.ARCHIVE_REFUSES_WRITES);
        assertThat(refusal.getMessage()).contains("archive refuses the feeder's writes", "14031");
        recoverAndCheck("refusing writes");
    }

    /** Every command but the handshake's: a paused archive (a stalled disk, a stop-the-world pause) stays connected. */
    static final String ALL_BUT_THE_HANDSHAKE =
            "['find', 'aggregate', 'count', 'distinct', 'insert', 'update', 'delete',"
                    + " 'findAndModify', 'getMore', 'killCursors', 'listIndexes', 'listCollections', 'commitTransaction', 'abortTransaction']";

    @Test
    void aPausedArchiveLeavesHotDataServedRefusesTheRestRetryablyAndLosesNothing() throws Exception {
        failArchive("{blockConnection: true, blockTimeMS: 30000, failCommands: " + ALL_BUT_THE_HANDSHAKE + "}");
        awaitOutOfService();
        outageRounds("paused", 300);
        assertThat(proxy.readiness().ready()).as("the hot data is still served").isTrue();
        recoverAndCheck("paused");
    }

    /** Each round: hot reads and an update served, whatever needs the archive refused retryably at once. */
    private void outageRounds(String statePrefix, int firstNewId) throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            int id = 1 + round % 3;
            String state = statePrefix + "-" + round;
            served(
                    "hot point read",
                    () -> assertThat(orders.find(Filters.eq("_id", id)).first()).isNotNull());
            served(
                    "hot range read",
                    () -> assertThat(orders.find(Filters.gte("createdAt", Date.from(now.minusSeconds(600))))
                                    .into(new ArrayList<>()))
                            .hasSize(3));
            served("hot update", () -> {
                assertThat(orders.updateOne(Filters.eq("_id", id), Updates.set("state", state))
                                .getModifiedCount())
                        .isEqualTo(1);
                acknowledged.put(id, state);
            });
            int hotDeleted = HOT_DELETED + round;
            served("hot delete", () -> {
                assertThat(orders.deleteOne(Filters.eq("_id", hotDeleted)).getDeletedCount())
                        .isEqualTo(1);
                deleted.add(hotDeleted);
            });
            int hotRemoved = HOT_REMOVED + round;
            // as a delete of a hot document: the fast tier holds its latest version, the archive is not needed
            served("hot findAndModify remove", () -> {
                BsonDocument removed = orders.findOneAndDelete(Filters.eq("_id", hotRemoved));
                assertThat(removed).as("the removed document, returned").isNotNull();
                assertThat(removed.getInt32("_id").getValue()).isEqualTo(hotRemoved);
                deleted.add(hotRemoved);
            });
            refused("cold point read", () -> orders.find(Filters.eq("_id", 100)).first());
            refused("count over both tiers", () -> orders.countDocuments());
            refused(
                    "untiered namespace read",
                    () -> client.getDatabase("shop")
                            .getCollection("customers")
                            .find()
                            .first());
            int newId = firstNewId + round;
            refused(
                    "insert (its _id is checked in the archive)",
                    () -> orders.insertOne(TieredProxyTest.order(newId, Instant.now(), "new")));
            // writes of documents only the archive holds: read there and copied up first, so refused, nothing written
            refused("cold update", () -> orders.updateOne(Filters.eq("_id", 101), Updates.set("state", state)));
            refused("cold delete", () -> orders.deleteOne(Filters.eq("_id", 102)));
            refused(
                    "cold findAndModify",
                    () -> orders.findOneAndUpdate(Filters.eq("_id", 103), Updates.set("state", state)));
            refused("cold findAndModify remove", () -> orders.findOneAndDelete(Filters.eq("_id", 103)));
            refused(
                    "update over both tiers (the sync barrier, then the archive)",
                    () -> orders.updateMany(Filters.eq("state", "cold"), Updates.set("state", state)));
        }
    }

    /**
     * The proxy has had the archive out of service (no member answering, or the serving probe's read left unanswered)
     * for the outage's confirmation: from then on, what needs the archive is refused at once.
     */
    private void awaitOutOfService() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (proxy.archiveOutOfServiceFor().isEmpty()
                || proxy.archiveOutOfServiceFor()
                                .get()
                                .compareTo(io.thermocline.proxy.topology.TierMonitor.OUTAGE_CONFIRMED)
                        < 0) {
            assertThat(System.nanoTime())
                    .as("the proxy notices the archive is out of service")
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private void failArchive(String data) {
        stack.archiveDirect
                .getDatabase("admin")
                .runCommand(BsonDocument.parse(
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: " + data + "}"));
    }

    /** Off goes the fail point, over a bare connection (a driver would first need the hello the fail point refuses). */
    private void archiveBack() throws Exception {
        try (io.thermocline.proxy.WireClient direct = new io.thermocline.proxy.WireClient(
                stack.tiers.embeddedArchive().orElseThrow().primary().port())) {
            assertThat(direct.command(BsonDocument.parse(
                                    "{configureFailPoint: 'failCommand', mode: 'off', $db: 'admin'}"))
                            .body()
                            .getNumber("ok")
                            .intValue())
                    .isEqualTo(1);
        }
    }

    private void recoverAndCheck(String scenario) throws Exception {
        long back = System.nanoTime();
        archiveBack();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!archiveHoldsEveryAcknowledgedWrite()) {
            assertThat(System.nanoTime())
                    .as(
                            "the feeder catches up: archive %s, acknowledged %s, deleted %s",
                            archiveStates(), acknowledged, deleted)
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
        long mirroredMs = (System.nanoTime() - back) / 1_000_000;
        // the feeder writes the archive first and clears its health after: wait for the clearing, do not assume it
        MetadataStore metadata = new MetadataStore(stack.fastWorkers);
        while (metadata.feederHealth().archiveUnavailable() != null) {
            assertThat(System.nanoTime())
                    .as("the feeder clears its health after catching up: %s", metadata.feederHealth())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
        // a paused archive answers the serving probe's held read only when its pause ends: until then it is out of
        // service
        while (proxy.archiveOutOfServiceFor().isPresent()) {
            assertThat(System.nanoTime())
                    .as("the proxy sees the archive serving again")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
        long servingMs = (System.nanoTime() - back) / 1_000_000;
        served(
                "cold point read after recovery",
                () -> assertThat(orders.find(Filters.eq("_id", 100)).first()).isNotNull());
        print(scenario, mirroredMs, servingMs);
        assertThat(archiveStates())
                .as("every acknowledged write, in the archive after the outage")
                .containsAllEntriesOf(acknowledged);
        assertColdDocumentsUntouched();
    }

    /** A refused write wrote nothing: the cold documents are in the archive as before, and none was copied up. */
    private void assertColdDocumentsUntouched() {
        Map<Integer, String> cold = new LinkedHashMap<>();
        stack.archiveOrders()
                .find(Filters.in("_id", COLD))
                .forEach(d -> cold.put(
                        d.getInt32("_id").getValue(), d.getString("state").getValue()));
        assertThat(cold)
                .as("the cold documents in the archive")
                .isEqualTo(Map.of(100, "cold", 101, "cold", 102, "cold", 103, "cold"));
        assertThat(stack.fastOrders().countDocuments(Filters.in("_id", COLD.subList(1, COLD.size()))))
                .as("cold documents copied into the fast tier by a refused write")
                .isZero();
    }

    /** The feeder, which has the outage's writes to mirror, says why in the shared state (thermocline status shows it). */
    private void awaitFeederReports(String why) throws InterruptedException {
        MetadataStore metadata = new MetadataStore(stack.fastWorkers);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (metadata.feederHealth().archiveUnavailable() == null
                || !metadata.feederHealth().archiveUnavailable().why().equals(why)) {
            assertThat(System.nanoTime())
                    .as("the feeder reports the archive %s: %s", why, metadata.feederHealth())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private boolean archiveHoldsEveryAcknowledgedWrite() {
        try {
            return archiveStates().entrySet().containsAll(acknowledged.entrySet())
                    && stack.archiveOrders().countDocuments(Filters.in("_id", deleted)) == 0;
        } catch (MongoException e) {
            return false;
        }
    }

    private Map<Integer, String> archiveStates() {
        Map<Integer, String> states = new LinkedHashMap<>();
        stack.archiveOrders()
                .find(Filters.in("_id", acknowledged.keySet()))
                .forEach(d -> states.put(
                        d.getInt32("_id").getValue(), d.getString("state").getValue()));
        return states;
    }

    private void served(String kind, Step op) throws Exception {
        long start = System.nanoTime();
        op.run();
        tally(kind).served(System.nanoTime() - start);
    }

    private void refused(String kind, Step op) throws InterruptedException {
        // a paused archive's held probe read is answered when its block ends, and the proxy then sees it serving until
        // the next probe read has waited the stall confirmation: a refusal is asked for while the outage stands
        awaitOutOfService();
        long start = System.nanoTime();
        try {
            op.run();
        } catch (MongoException e) {
            tally(kind).refused(System.nanoTime() - start);
            assertThat(e.getCode()).as("%s: %s", kind, e.getMessage()).isEqualTo(6);
            assertThat(e.getMessage()).as(kind).contains("archive");
            return;
        } catch (Exception e) {
            throw new AssertionError(kind, e);
        }
        throw new AssertionError(kind + " was served while the archive was down (after "
                + (System.nanoTime() - start) / 1_000_000 + " ms)");
    }

    private Tally tally(String kind) {
        return tallies.computeIfAbsent(kind, k -> new Tally());
    }

    private void print(String scenario, long mirroredMs, long servingMs) {
        StringBuilder table = new StringBuilder(
                String.format(Locale.ROOT, "%nArchive %s, through the proxy (%d rounds):%n", scenario, ROUNDS));
        table.append("| operation | served | refused | slowest ms |\n|---|---|---|---|\n");
        tallies.forEach((kind, t) -> table.append(
                String.format(Locale.ROOT, "| %s | %d | %d | %d |%n", kind, t.served, t.refused, t.slowestMs())));
        table.append(String.format(
                Locale.ROOT,
                "archive back -> every acknowledged write in the archive: %d ms; archive reads served again:"
                        + " %d ms; acknowledged writes lost: 0 of %d (the documents' last updates and the deletes)%n",
                mirroredMs,
                servingMs,
                acknowledged.size() + deleted.size()));
        System.out.println(table);
    }

    interface Step {
        void run() throws Exception;
    }

    static final class Tally {
        int served;
        int refused;
        long slowestNanos;

        void served(long nanos) {
            served++;
            slowestNanos = Math.max(slowestNanos, nanos);
        }

        void refused(long nanos) {
            refused++;
            slowestNanos = Math.max(slowestNanos, nanos);
        }

        long slowestMs() {
            return slowestNanos / 1_000_000;
        }
    }
}
