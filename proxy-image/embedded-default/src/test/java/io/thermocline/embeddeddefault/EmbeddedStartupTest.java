package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import com.mongodb.event.ServerMonitorListener;
import io.thermocline.embedded.storage.Storage;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client port is open from the first step of the start (issue 44 item 5): a client started with the stack, as
 * an application started next to it is, waits while the archive opens its data and is served once the stack is up,
 * and a raw command meanwhile gets the retryable "starting" error a starting mongod gives.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EmbeddedStartupTest {

    private static final Pattern PORT =
            Pattern.compile("MongoDB clients can connect to mongodb://127\\.0\\.0\\.1:(\\d+)/ now");

    @TempDir
    Path dir;

    @Test
    void aClientConnectedWhileTheArchiveOpensIsServedOnceTheStackIsUp() throws Exception {
        // the archive's storage opens only when the test says: the stack is held in its first long step
        CountDownLatch archiveMayOpen = new CountDownLatch(1);
        EmbeddedStack.Options options = LocalStack.options(dir, "--sample-documents", "100")
                .withDisk(path -> {
                    if (path.endsWith("archive")) {
                        try {
                            archiveMayOpen.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException(e);
                        }
                    }
                    return Storage.directory(path);
                });
        StringWriter printed = new StringWriter();
        CompletableFuture<EmbeddedStack> starting = CompletableFuture.supplyAsync(() -> {
            try {
                return EmbeddedStack.start(options, new PrintWriter(printed, true));
            } catch (EmbeddedStack.StartFailure e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            int port = await().atMost(Duration.ofMinutes(1)).until(() -> clientPort(printed), p -> p > 0);
            List<Throwable> heartbeatFailures = new CopyOnWriteArrayList<>();
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString("mongodb://127.0.0.1:" + port + "/"))
                    // far longer than the start takes on a loaded machine: the driver must wait, not give up
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(4, TimeUnit.MINUTES))
                    .applyToServerSettings(s -> s.addServerMonitorListener(new ServerMonitorListener() {
                        @Override
                        public void serverHeartbeatFailed(ServerHeartbeatFailedEvent event) {
                            heartbeatFailures.add(event.getThrowable());
                        }
                    }))
                    .build())) {
                MongoCollection<Document> orders =
                        client.getDatabase(SampleData.DATABASE).getCollection(SampleData.COLLECTION);
                CompletableFuture<Long> firstCount = CompletableFuture.supplyAsync(orders::countDocuments);
                // the driver's monitor was answered by the starting stack, naming the step it is in
                await().atMost(Duration.ofMinutes(1))
                        .until(() -> heartbeatFailures.stream()
                                .anyMatch(e -> String.valueOf(e.getMessage())
                                        .contains("Thermocline is starting (starting the archive")));

                BsonDocument find = command(port, BsonDocument.parse("{find: 'orders', $db: 'demo'}"));
                assertThat(find.getInt32("code").getValue()).as(find.toJson()).isEqualTo(13436);
                BsonDocument insert = command(
                        port,
                        BsonDocument.parse("{insert: 'orders', documents: [{_id: 'raw'}],"
                                + " lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}},"
                                + " txnNumber: {$numberLong: '1'}, $db: 'demo'}"));
                assertThat(insert.getInt32("code").getValue()).isEqualTo(13436);
                assertThat(insert.getArray("errorLabels").getValues())
                        .extracting(v -> v.asString().getValue())
                        .containsExactly("RetryableWriteError");
                assertThat(firstCount)
                        .as("the driver waits while the stack starts")
                        .isNotDone();

                archiveMayOpen.countDown();
                assertThat(firstCount.get(4, TimeUnit.MINUTES))
                        .as("answered, no error")
                        .isEqualTo(100);
                assertThat(starting.get(1, TimeUnit.MINUTES).proxyPort()).isEqualTo(port);
            }
        } finally {
            archiveMayOpen.countDown();
            starting.thenAccept(EmbeddedStack::close).get(2, TimeUnit.MINUTES);
        }
    }

    private static int clientPort(StringWriter printed) {
        Matcher m = PORT.matcher(printed.toString());
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** One OP_MSG command on a connection of its own, as a client without a driver sends it. */
    private static BsonDocument command(int port, BsonDocument command) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(60_000);
            socket.getOutputStream().write(WireCodec.encodeToBytes(new Outbound(OpMsg.request(1, command), null)));
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] head = new byte[4];
            in.readFully(head);
            byte[] whole = new byte
                    [ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt()];
            System.arraycopy(head, 0, whole, 0, 4);
            in.readFully(whole, 4, whole.length - 4);
            return ((OpMsg) WireCodec.decode(whole, WireCodec.DEFAULT_MAX_MESSAGE_SIZE)
                            .message())
                    .body();
        }
    }
}
