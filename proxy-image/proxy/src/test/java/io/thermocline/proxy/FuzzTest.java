package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.DocumentSequence;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Thousands of malformed, truncated, oversized and randomly mutated messages: the proxy must
 * never crash or hang a connection, must close only the offending connection, and must keep
 * serving a well-behaved client running at the same time.
 */
class FuzzTest {
    private static final long SEED = 20261129L;
    private static final int CASES = 3000;

    @Test
    void malformedInputNeverCrashesTheProxyNorDisturbsOtherClients() throws Exception {
        try (ProxyFixture fixture = ProxyFixture.start()) {
            List<byte[]> corpus = corpus();
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

            try (WireClient bystander = new WireClient(fixture.port())) {
                Random random = new Random(SEED);
                int hung = 0;
                for (int n = 0; n < CASES; n++) {
                    byte[] bytes = malformed(random, corpus);
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
                assertThat(fixture.proxy().metrics()).isNotNull();
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

    private static List<byte[]> corpus() {
        List<byte[]> c = new ArrayList<>();
        RawBsonDocument doc = OpMsg.raw(new BsonDocument("_id", new BsonInt32(1)).append("v", new BsonInt32(2)));
        c.add(WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(1, BsonDocument.parse("{hello: 1, $db: 'admin'}")))));
        c.add(WireCodec.encodeToBytes(Outbound.plain(new OpMsg(2, 0, 0, OpMsg.raw(BsonDocument.parse("{insert: 'm', $db: 'fuzz'}")),
                List.of(new DocumentSequence("documents", List.of(doc, doc)))))));
        c.add(WireCodec.encodeToBytes(Outbound.plain(new OpMsg(3, 0, OpMsg.CHECKSUM_PRESENT,
                OpMsg.raw(BsonDocument.parse("{find: 'm', filter: {a: {$gt: 1}}, $db: 'fuzz'}")), List.of()))));
        c.add(WireCodec.encodeToBytes(Outbound.plain(new OpQuery(4, 0, 0, "admin.$cmd", 0, -1,
                OpMsg.raw(BsonDocument.parse("{isMaster: 1}")), null))));
        for (Compressor comp : List.of(Compressor.SNAPPY, Compressor.ZLIB, Compressor.ZSTD)) {
            c.add(WireCodec.encodeToBytes(new Outbound(OpMsg.request(5, BsonDocument.parse("{count: 'm', $db: 'fuzz'}")), comp)));
        }
        c.add(WireCodec.encodeToBytes(Outbound.plain(new OpMsg(6, 0, OpMsg.EXHAUST_ALLOWED,
                OpMsg.raw(BsonDocument.parse("{getMore: {$numberLong: '12345'}, collection: 'm', $db: 'fuzz'}")), List.of()))));
        return c;
    }

    private static byte[] malformed(Random r, List<byte[]> corpus) {
        byte[] base = corpus.get(r.nextInt(corpus.size())).clone();
        ByteBuffer b = ByteBuffer.wrap(base).order(ByteOrder.LITTLE_ENDIAN);
        switch (r.nextInt(9)) {
            case 0 -> { // truncated anywhere
                return java.util.Arrays.copyOf(base, r.nextInt(base.length));
            }
            case 1 -> { // random garbage
                byte[] g = new byte[1 + r.nextInt(200)];
                r.nextBytes(g);
                return g;
            }
            case 2 -> { // impossible or oversized length
                int[] lengths = {-1, 0, 5, 15, Integer.MAX_VALUE, 48_000_001, 60_000_000};
                b.putInt(0, lengths[r.nextInt(lengths.length)]);
                return base;
            }
            case 3 -> { // unknown opcode
                b.putInt(12, r.nextInt());
                return base;
            }
            case 4 -> { // flip a few random bytes after the header
                for (int i = 0; i < 1 + r.nextInt(4); i++) {
                    int at = 16 + r.nextInt(base.length - 16);
                    base[at] ^= (byte) (1 + r.nextInt(255));
                }
                return base;
            }
            case 5 -> { // length larger than what follows (truncated by declaration)
                b.putInt(0, base.length + 1 + r.nextInt(1000));
                return base;
            }
            case 6 -> { // corrupt a BSON length inside the body
                int at = 20 + r.nextInt(Math.max(1, base.length - 24));
                b.putInt(Math.min(at, base.length - 4), r.nextInt());
                return base;
            }
            case 7 -> { // OP_COMPRESSED header lies about the size or names an unknown compressor
                byte[] c = WireCodec.encodeToBytes(new Outbound(OpMsg.request(9, BsonDocument.parse("{ping: 1, $db: 'admin'}")),
                        Compressor.values()[1 + r.nextInt(3)]));
                ByteBuffer cb = ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN);
                if (r.nextBoolean()) {
                    cb.putInt(20, r.nextBoolean() ? Integer.MAX_VALUE : r.nextInt(100_000_000));
                } else {
                    c[24] = (byte) (4 + r.nextInt(250));
                }
                return c;
            }
            default -> { // a valid message followed by garbage in the same stream
                byte[] tail = new byte[1 + r.nextInt(64)];
                r.nextBytes(tail);
                byte[] both = java.util.Arrays.copyOf(base, base.length + tail.length);
                System.arraycopy(tail, 0, both, base.length, tail.length);
                return both;
            }
        }
    }
}
