package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;

/**
 * Converts between the driver's BSON model (used by the wire front and the replica-set layer)
 * and mongo-java-server's {@link Document}, through BSON bytes so no value type is lost.
 */
public final class BsonBridge {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private BsonBridge() {
    }

    public static Document toBackend(BsonDocument document) {
        RawBsonDocument raw = document instanceof RawBsonDocument r ? r : new RawBsonDocument(document, CODEC);
        // The bson library hands out little-endian NIO buffers and Netty keeps a wrapped buffer's
        // byte order, which would turn the decoder's big-endian UUID reads (subtype 4) around.
        ByteBuffer bytes = raw.getByteBuffer().asNIO().duplicate().order(ByteOrder.BIG_ENDIAN);
        return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(bytes));
    }

    public static RawBsonDocument fromBackend(Document document) {
        ByteBuf buffer = Unpooled.buffer(256);
        try {
            BsonEncoder.encodeDocument(document, buffer);
            byte[] bytes = new byte[buffer.readableBytes()];
            buffer.readBytes(bytes);
            return new RawBsonDocument(bytes);
        } finally {
            buffer.release();
        }
    }

    /** A mutable, fully decoded copy (RawBsonDocument is immutable). */
    public static BsonDocument mutable(BsonDocument document) {
        if (!(document instanceof RawBsonDocument raw)) {
            return document.clone();
        }
        try (BsonBinaryReader reader = new BsonBinaryReader(raw.getByteBuffer().asNIO())) {
            return CODEC.decode(reader, DecoderContext.builder().build());
        }
    }
}
