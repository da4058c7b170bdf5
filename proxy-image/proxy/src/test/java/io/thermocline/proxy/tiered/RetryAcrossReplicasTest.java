package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A retryable write the proxy executes itself (a guarded {@code $inc} on a cold document, a delete
 * with tombstones), retried with the same {@code lsid} and {@code txnNumber} on another proxy replica,
 * one after the other and concurrently: it runs once, and every attempt gets the first one's reply.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RetryAcrossReplicasTest {

    static TieredStack stack;
    static TieredRouting secondRouting;
    static ProxyServer second;
    static final Instant NOW = Instant.now();

    @BeforeAll
    static void start() throws Exception {
        stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20));
        stack.startFeeder();
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "tiers:\n  fast:\n    uri: " + stack.tiers.fastUri() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + stack.tiers.archiveUri() + "\n    connectionBudget: 8\n"
                + "fleet:\n  instanceId: tiered-test-1\n"
                + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n";
        ThermoclineConfig config = ConfigLoader.parse(yaml, Map.of());
        ProxySettings settings = ProxySettings.from(config)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
        second = new ProxyServer(
                        settings,
                        TieredProxy.routing(
                                stack.tiers.fastUri(),
                                stack.tiers.archiveUri(),
                                config.collections(),
                                Duration.ofSeconds(10),
                                settings.instanceId(),
                                TieredProxy.Options.defaults().withFollowInterval(TieredStack.FOLLOW)))
                .start();
        secondRouting = second.tieredRouting().orElseThrow();
        stack.coverSince(NOW.minus(Duration.ofHours(1)), secondRouting);
    }

    @AfterAll
    static void stop() {
        second.close();
        stack.close();
    }

    /** One connection speaking OP_MSG, so the test chooses lsid and txnNumber and the replica a retry goes to. */
    static final class Raw implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;

        Raw(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout(30_000);
            in = new DataInputStream(socket.getInputStream());
        }

        BsonDocument command(BsonDocument body) throws IOException {
            socket.getOutputStream()
                    .write(WireCodec.encodeToBytes(new Outbound(OpMsg.request(WireCodec.nextRequestId(), body), null)));
            socket.getOutputStream().flush();
            byte[] head = new byte[4];
            in.readFully(head);
            int length = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt();
            byte[] whole = new byte[length];
            System.arraycopy(head, 0, whole, 0, 4);
            in.readFully(whole, 4, length - 4);
            return ((OpMsg) WireCodec.decode(whole, 64 * 1024 * 1024).message()).body();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private static BsonDocument session(BsonDocument command, UUID lsid, long txnNumber) {
        return command.append("lsid", new BsonDocument("id", new BsonBinary(lsid, UuidRepresentation.STANDARD)))
                .append("txnNumber", new BsonInt64(txnNumber))
                .append("$db", new BsonString("shop"));
    }

    private static BsonDocument inc(int id, UUID lsid, long txnNumber) {
        return session(
                BsonDocument.parse("{update: 'orders', updates: [{q: {_id: " + id + "}, u: {$inc: {n: 1}}}]}"),
                lsid,
                txnNumber);
    }

    private static void archived(int id) {
        stack.archiveOrders()
                .insertOne(SessionConsistencyTest.order(id, NOW.minus(Duration.ofHours(5)), "cold")
                        .append("n", new BsonInt32(0)));
    }

    private static int counter(int id) {
        return stack.orders().find(Filters.eq("_id", id)).first().getNumber("n").intValue();
    }

    @Test
    void guardedIncRetriedOnAnotherReplicaRunsOnce() throws Exception {
        archived(900);
        UUID lsid = UUID.randomUUID();
        try (Raw a = new Raw(stack.proxy.port());
                Raw b = new Raw(second.port())) {
            BsonDocument first = a.command(inc(900, lsid, 1));
            BsonDocument retry = b.command(inc(900, lsid, 1));
            assertThat(first.getNumber("n").intValue()).isEqualTo(1);
            assertThat(retry.getNumber("n").intValue()).isEqualTo(1);
            assertThat(retry.getNumber("nModified").intValue()).isEqualTo(1);
        }
        assertThat(counter(900)).as("the $inc applied once").isEqualTo(1);
    }

    @Test
    void deleteRetriedOnAnotherReplicaGetsTheFirstReply() throws Exception {
        archived(901);
        UUID lsid = UUID.randomUUID();
        BsonDocument delete = BsonDocument.parse("{delete: 'orders', deletes: [{q: {_id: 901}, limit: 1}]}");
        try (Raw a = new Raw(stack.proxy.port());
                Raw b = new Raw(second.port())) {
            assertThat(a.command(session(delete.clone(), lsid, 7))
                            .getNumber("n")
                            .intValue())
                    .isEqualTo(1);
            assertThat(b.command(session(delete.clone(), lsid, 7))
                            .getNumber("n")
                            .intValue())
                    .as("the retry's reply")
                    .isEqualTo(1);
        }
        assertThat(stack.orders().find(Filters.eq("_id", 901)).first()).isNull();
    }

    @Test
    void guardedInsertRetriedOnAnotherReplicaGetsTheFirstReply() throws Exception {
        archived(903);
        UUID lsid = UUID.randomUUID();
        String insert = "{insert: 'orders', documents: [{_id: 904, createdAt: {$date: '" + NOW + "'}}, {_id: 903}]}";
        try (Raw a = new Raw(stack.proxy.port());
                Raw b = new Raw(second.port())) {
            BsonDocument first = a.command(session(BsonDocument.parse(insert), lsid, 3));
            BsonDocument retry = b.command(session(BsonDocument.parse(insert), lsid, 3));
            assertThat(first.getNumber("n").intValue()).isEqualTo(1);
            assertThat(first.getArray("writeErrors")
                            .get(0)
                            .asDocument()
                            .getNumber("index")
                            .intValue())
                    .isEqualTo(1);
            assertThat(retry.getNumber("n").intValue()).as("the retry's n").isEqualTo(1);
            assertThat(retry.getArray("writeErrors")).isEqualTo(first.getArray("writeErrors"));
        }
        // a point read (the fast tier answers it): this client has not observed the raw connections' writes,
        // so an archive-routed count would not wait for the feeder in session consistency
        assertThat(stack.orders().find(Filters.eq("_id", 904)).first()).isNotNull();
        assertThat(stack.fastOrders().countDocuments(Filters.eq("_id", 904))).isEqualTo(1);
    }

    @Test
    void concurrentRetriesOnTwoReplicasRunOnce() throws Exception {
        int rounds = 30;
        archived(902);
        UUID lsid = UUID.randomUUID();
        List<String> wrongReplies = new ArrayList<>();
        try (Raw a = new Raw(stack.proxy.port());
                Raw b = new Raw(second.port())) {
            for (int round = 1; round <= rounds; round++) {
                long txn = round;
                CountDownLatch go = new CountDownLatch(1);
                CompletableFuture<BsonDocument> onA =
                        CompletableFuture.supplyAsync(() -> send(a, go, inc(902, lsid, txn)));
                CompletableFuture<BsonDocument> onB =
                        CompletableFuture.supplyAsync(() -> send(b, go, inc(902, lsid, txn)));
                go.countDown();
                for (BsonDocument reply : List.of(onA.get(60, TimeUnit.SECONDS), onB.get(60, TimeUnit.SECONDS))) {
                    if (!reply.isNumber("n") || reply.getNumber("n").intValue() != 1) {
                        wrongReplies.add(reply.toJson());
                    }
                }
            }
        }
        assertThat(wrongReplies).isEmpty();
        assertThat(counter(902)).as("one $inc per txnNumber").isEqualTo(rounds);
    }

    private static BsonDocument send(Raw raw, CountDownLatch go, BsonDocument command) {
        try {
            go.await();
            return raw.command(command);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
