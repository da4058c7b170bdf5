package io.thermocline.proxy;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.DocumentSequence;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.RawBsonDocument;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** Malformed client messages for the fuzz tests, derived from well-formed ones by a seeded random. */
public final class MalformedMessages {

    private MalformedMessages() {
    }

    /** The proxy's count of messages that failed framing or validation. */
    public static double countedBy(ProxyMetrics metrics) {
        return metrics.registry().scrape().stream()
                .filter(s -> s.getMetadata().getName().equals("thermocline_proxy_malformed_messages"))
                .mapToDouble(s -> ((CounterSnapshot) s).getDataPoints().get(0).getValue()).sum();
    }

    /** Well-formed messages of every kind a client sends: the seeds of the mutations. */
    public static List<byte[]> corpus() {
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

    /** One seed, broken one of nine ways (truncated, garbage, bad lengths, opcode, flipped bytes, bad compression, trailing junk). */
    public static byte[] malformed(Random r, List<byte[]> corpus) {
        byte[] base = corpus.get(r.nextInt(corpus.size())).clone();
        ByteBuffer b = ByteBuffer.wrap(base).order(ByteOrder.LITTLE_ENDIAN);
        switch (r.nextInt(9)) {
            case 0 -> { // truncated anywhere
                return Arrays.copyOf(base, r.nextInt(base.length));
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
                byte[] both = Arrays.copyOf(base, base.length + tail.length);
                System.arraycopy(tail, 0, both, base.length, tail.length);
                return both;
            }
        }
    }
}
