package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import io.thermocline.embedded.storage.FullDisk;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBinary;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.Document;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What the embedded default acknowledged survives an orderly stop, whatever the archive does (issue 24). */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class EmbeddedFaultsTest {

    @TempDir
    Path dir;

    private EmbeddedStack.Options options() {
        return LocalStack.options(dir, "--sample-documents", "0");
    }

    private static MongoClient client(EmbeddedStack stack) {
        return MongoClients.create("mongodb://127.0.0.1:" + stack.proxyPort() + "/?retryWrites=false");
    }

    private static MongoCollection<Document> orders(MongoClient client) {
        return client.getDatabase(SampleData.DATABASE).getCollection(SampleData.COLLECTION);
    }

    @Test
    void aRetrySentAfterAnOrderlyRestartIsNotAppliedAgain() throws Exception {
        BsonDocument lsid = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
        BsonDocument retried = BsonDocument.parse(
                        "{update: 'orders', updates: [{q: {_id: 'counter'}, u: {$inc: {n: 1}}}], $db: 'demo'}")
                .append("lsid", lsid)
                .append("txnNumber", new BsonInt64(1));
        try (EmbeddedStack stack = EmbeddedStack.start(options(), new PrintWriter(new StringWriter()));
                MongoClient client = client(stack)) {
            orders(client)
                    .insertOne(new Document("_id", "counter")
                            .append(SampleData.AGE_FIELD, new Date())
                            .append("n", 0));
            BsonDocument first = command(stack.proxyPort(), retried);
            assertThat(first.getInt32("nModified").getValue())
                    .as(first.toJson())
                    .isEqualTo(1);
        }
        try (EmbeddedStack stack = EmbeddedStack.start(options(), new PrintWriter(new StringWriter()));
                MongoClient client = client(stack)) {
            BsonDocument again = command(stack.proxyPort(), retried);
            assertThat(again.getDouble("ok").getValue()).as(again.toJson()).isEqualTo(1.0);
            assertThat(orders(client).find(Filters.eq("_id", "counter")).first().getInteger("n"))
                    .as("the retry of an update acknowledged before the restart")
                    .isEqualTo(1);
        }
    }

    @Test
    void aDeadLetteredWriteSurvivesAnOrderlyStopWithAWarning() throws Exception {
        StringWriter printed = new StringWriter();
        Document refused = new Document("_id", "hot-duplicate")
                .append(SampleData.AGE_FIELD, new Date())
                .append("email", "a@example.com");
        try (EmbeddedStack stack = EmbeddedStack.start(options(), new PrintWriter(printed, true));
                MongoClient archive =
                        MongoClients.create(stack.config().tiers().archive().uri());
                MongoClient fast =
                        MongoClients.create(stack.config().tiers().fast().uri())) {
            // the archive refuses this document for good (a unique index the fast tier does not have): a dead letter
            MongoCollection<Document> archived = orders(archive);
            archived.insertOne(new Document("_id", "cold")
                    .append(SampleData.AGE_FIELD, Date.from(Instant.now().minus(Duration.ofDays(300))))
                    .append("email", "a@example.com"));
            archived.createIndex(Indexes.ascending("email"), new IndexOptions().unique(true));
            orders(fast).insertOne(refused);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> fast.getDatabase("thermocline")
                                    .getCollection("deadLetters")
                                    .countDocuments()
                            == 1);
        }
        assertThat(printed.toString())
                .contains(
                        "1 acknowledged write(s) the archive refused (dead letters) are kept in the fast tier on disk");
        try (EmbeddedStack stack = EmbeddedStack.start(options(), new PrintWriter(new StringWriter()));
                MongoClient client = client(stack)) {
            assertThat(orders(client).find(Filters.eq("_id", "hot-duplicate")).first())
                    .as("after the restart")
                    .isEqualTo(refused);
        }
    }

    @Test
    void aFullDiskRefusesWritesAtOnceShowsInReadinessAndMetricsAndLosesNothingAcknowledged() throws Exception {
        FullDisk disk = new FullDisk();
        EmbeddedStack.Options options = options().withDisk(disk::storage);
        List<Integer> acknowledged = new ArrayList<>();
        try (EmbeddedStack stack = EmbeddedStack.start(options, new PrintWriter(new StringWriter()));
                MongoClient client = client(stack)) {
            MongoException refusal = null;
            for (int i = 0; i < 400 && refusal == null; i++) {
                if (i == 50) {
                    disk.fill();
                }
                try {
                    orders(client).insertOne(new Document("_id", i).append(SampleData.AGE_FIELD, new Date()));
                    acknowledged.add(i);
                } catch (MongoException e) {
                    refusal = e;
                }
            }
            assertThat(refusal).as("a write once the disk is full").isNotNull();
            assertThat(refusal.getMessage()).contains("disk full");
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                HttpResponse<String> ready = http(stack, "/health/ready");
                assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
                assertThat(ready.body()).contains("writes refused", "disk full");
            });
            assertThat(http(stack, "/metrics").body())
                    .containsPattern("thermocline_storage_writes_refused\\{tier=\"(archive|fast)\"} 1");
            MongoException next = org.assertj.core.api.Assertions.catchThrowableOfType(
                    MongoException.class,
                    () -> orders(client)
                            .insertOne(new Document("_id", "after").append(SampleData.AGE_FIELD, new Date())));
            assertThat(next).as("a write while the disk is full").isNotNull();
            assertThat(next.getCode()).isEqualTo(262);
            assertThat(next.hasErrorLabel("RetryableWriteError")).isTrue();
            assertThat(next.getMessage()).contains("write refused, not applied", "disk full");
        }
        // a restart on the still-full disk does not say it is up as if healthy
        StringWriter printed = new StringWriter();
        try (EmbeddedStack stack = EmbeddedStack.start(options, new PrintWriter(printed, true))) {
            assertThat(printed.toString()).doesNotContain("is up").contains("REFUSES WRITES", "disk full");
        } catch (EmbeddedStack.StartFailure e) {
            assertThat(e.getMessage()).contains("disk full");
        } catch (RuntimeException e) {
            throw new AssertionError("restart on the full disk", e);
        }
        disk.free();
        try (EmbeddedStack stack = EmbeddedStack.start(options(), new PrintWriter(new StringWriter()));
                MongoClient client = client(stack)) {
            List<Integer> kept = new ArrayList<>();
            orders(client).find(Filters.type("_id", "int")).forEach(d -> kept.add(d.getInteger("_id")));
            assertThat(kept)
                    .as("every insert acknowledged before the disk filled, after a restart with space")
                    .containsAll(acknowledged);
        }
    }

    private static HttpResponse<String> http(EmbeddedStack stack, String path)
            throws IOException, InterruptedException {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.httpPort() + path))
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    /** One OP_MSG command as sent (the drivers choose their own lsid; a retry needs the same one after the restart). */
    private static BsonDocument command(int port, BsonDocument command) throws IOException {
        BasicOutputBuffer body = new BasicOutputBuffer();
        new BsonDocumentCodec()
                .encode(
                        new BsonBinaryWriter(body),
                        command,
                        EncoderContext.builder().build());
        byte[] doc = body.toByteArray();
        ByteBuffer message = ByteBuffer.allocate(21 + doc.length).order(ByteOrder.LITTLE_ENDIAN);
        message.putInt(21 + doc.length)
                .putInt(1)
                .putInt(0)
                .putInt(2013)
                .putInt(0)
                .put((byte) 0)
                .put(doc);
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(60_000);
            socket.getOutputStream().write(message.array());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] header = new byte[16];
            in.readFully(header);
            int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt();
            byte[] rest = new byte[length - 16];
            in.readFully(rest);
            ByteBuffer reply = ByteBuffer.wrap(rest, 5, rest.length - 5).order(ByteOrder.LITTLE_ENDIAN);
            return new BsonDocumentCodec()
                    .decode(
                            new BsonBinaryReader(reply),
                            DecoderContext.builder().build());
        }
    }
}
