package io.thermocline.proxy.command;

import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.ByteBufNIO;
import org.bson.RawBsonDocument;
import org.bson.io.ByteBufferBsonInput;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What the proxy needs from a member's reply, read in one pass over its top-level fields
 * (a batch is skipped by its length, never decoded): whether it succeeded, its error code,
 * the member's {@code $clusterTime}, and the cursor it opened.
 *
 * @param cursorIdOffset where the eight bytes of {@code cursor.id} start in the reply, or -1
 */
public record ReplyFacts(boolean ok, int code, BsonDocument clusterTime, long cursorId, int cursorIdOffset, String cursorNs) {

    public static ReplyFacts of(RawBsonDocument reply) {
        ByteBuffer bytes = reply.getByteBuffer().asNIO().order(ByteOrder.LITTLE_ENDIAN);
        // A reply decoded from a message is a window on the message's bytes: offsets are kept relative to it.
        int base = bytes.position();
        ByteBufferBsonInput input = new ByteBufferBsonInput(new ByteBufNIO(bytes));
        boolean ok = false;
        int code = 0;
        BsonDocument clusterTime = null;
        long cursorId = 0;
        int cursorIdOffset = -1;
        String ns = null;
        try (BsonBinaryReader reader = new BsonBinaryReader(input)) {
            reader.readStartDocument();
            while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                String name = reader.readName();
                BsonType type = reader.getCurrentBsonType();
                if (name.equals("ok")) {
                    ok = number(reader, type) == 1.0;
                } else if (name.equals("code") && (type == BsonType.INT32 || type == BsonType.INT64 || type == BsonType.DOUBLE)) {
                    code = (int) number(reader, type);
                } else if (name.equals("$clusterTime") && type == BsonType.DOCUMENT) {
                    int start = input.getPosition();
                    reader.skipValue();
                    clusterTime = slice(bytes, start, input.getPosition() - start);
                } else if (name.equals("cursor") && type == BsonType.DOCUMENT) {
                    reader.readStartDocument();
                    while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                        String field = reader.readName();
                        if (field.equals("id") && reader.getCurrentBsonType() == BsonType.INT64) {
                            cursorIdOffset = input.getPosition() - base;
                            cursorId = reader.readInt64();
                        } else if (field.equals("ns") && reader.getCurrentBsonType() == BsonType.STRING) {
                            ns = reader.readString();
                        } else {
                            reader.skipValue();
                        }
                    }
                    reader.readEndDocument();
                } else {
                    reader.skipValue();
                }
            }
        }
        return new ReplyFacts(ok, code, clusterTime, cursorId, cursorIdOffset, ns);
    }

    private static double number(BsonBinaryReader reader, BsonType type) {
        switch (type) {
            case DOUBLE:
                return reader.readDouble();
            case INT32:
                return reader.readInt32();
            case INT64:
                return reader.readInt64();
            case BOOLEAN:
                return reader.readBoolean() ? 1 : 0;
            default:
                reader.skipValue();
                return 0;
        }
    }

    private static BsonDocument slice(ByteBuffer bytes, int start, int length) {
        byte[] copy = new byte[length];
        bytes.duplicate().position(start).get(copy);
        return new RawBsonDocument(copy);
    }

    /** The reply with {@code cursor.id} replaced; the reply's bytes are copied once and eight of them overwritten. */
    public RawBsonDocument withCursorId(RawBsonDocument reply, long newId) {
        if (cursorIdOffset < 0) {
            return reply;
        }
        ByteBuffer nio = reply.getByteBuffer().asNIO();
        byte[] copy = new byte[nio.remaining()];
        nio.get(copy);
        ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN).putLong(cursorIdOffset, newId);
        return new RawBsonDocument(copy);
    }
}
