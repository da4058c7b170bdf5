package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Malformed, truncated, oversized and randomly mutated messages over real sockets: the proxy must
 * never crash or hang a connection, must close only the offending connection, and must keep
 * serving a well-behaved client running at the same time. What each malformed message gets is
 * checked message by message, byte by byte, in {@code server.MalformedMessageTest}.
 */
@Timeout(300)
class FuzzTest {
    private static final long SEED = 20261129L;
    private static final int CASES = 1000;

    @Test
    void malformedInputNeverCrashesTheProxyNorDisturbsOtherClients() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start()) {
            List<byte[]> corpus = MalformedMessages.corpus();
            AtomicBoolean stop = new AtomicBoolean();
            List<Throwable> goodFailures = new CopyOnWriteArrayList<>();
            AtomicInteger goodOps = new AtomicInteger();
            Thread good = new Thread(() -> {
                try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(fixture.uri()))
                        .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
                    MongoCollection<Document> coll = client.getDatabase("fuzz").getCollection("good");
                    int i = 0;
                    while (!stop.get()) {
                        coll.insertOne(new Document("_id", i));
                        Document back = coll.find(new Document("_id", i)).first();
                        if (back == null) {
                            throw new AssertionError("document " + i + " missing");
                        }
                        i++;
                        goodOps.incrementAndGet();
                    }
                } catch (Throwable t) {
                    goodFailures.add(t);
                }
            }, "well-behaved-client");
            good.start();

            double malformedBefore = MalformedMessages.countedBy(fixture.proxy().metrics());
            try (WireClient bystander = new WireClient(fixture.port())) {
                Random random = new Random(SEED);
                int hung = 0;
                for (int n = 0; n < CASES; n++) {
                    byte[] bytes = MalformedMessages.malformed(random, corpus);
                    if (!sendAndExpectClose(fixture.port(), bytes)) {
                        hung++;
                    }
                }
                stop.set(true);
                good.join(30_000);
                assertThat(hung).as("connections the proxy neither answered-and-closed nor closed (seed %d)", SEED).isZero();
                assertThat(goodFailures).as("well-behaved client failures").isEmpty();
                assertThat(goodOps.get()).isPositive();
                assertThat(bystander.command(BsonDocument.parse("{ping: 1, $db: 'admin'}")).body().getNumber("ok").intValue()).isEqualTo(1);
                assertThat(MalformedMessages.countedBy(fixture.proxy().metrics()) - malformedBefore)
                        .as("malformed messages counted").isGreaterThan(CASES / 4.0);
            }
            try (WireClient after = new WireClient(fixture.port())) {
                assertThat(after.command(BsonDocument.parse("{count: 'good', $db: 'fuzz'}")).body().getNumber("n").intValue())
                        .isEqualTo(goodOps.get());
            }
        }
    }

    /** Sends the bytes, half-closes, and waits for the proxy to close its side: true when it did. */
    private static boolean sendAndExpectClose(int port, byte[] bytes) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.setSoLinger(true, 0);
            try {
                s.getOutputStream().write(bytes);
                s.shutdownOutput();
            } catch (IOException closedEarly) {
                return true;
            }
            InputStream in = s.getInputStream();
            byte[] sink = new byte[8192];
            try {
                while (in.read(sink) >= 0) {
                    // drain replies until the proxy closes
                }
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException reset) {
                return true;
            }
        }
    }
}
