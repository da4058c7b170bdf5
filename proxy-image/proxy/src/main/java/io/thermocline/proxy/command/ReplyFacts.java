package io.thermocline.proxy.command;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.RawBsonDocument;

/**
 * What the proxy needs from a member's reply, read in one pass over its top-level fields
 * (a batch is skipped by its length, never decoded): whether it succeeded, its error code,
 * the member's {@code $clusterTime}, and the cursor it opened.
 *
 * @param cursorIdOffset where the eight bytes of {@code cursor.id} start in the reply, or -1
 */
public record ReplyFacts(
        boolean ok, int code, BsonDocument clusterTime, long cursorId, int cursorIdOffset, String cursorNs) {

    public static ReplyFacts of(RawBsonDocument reply) {
        ByteBuffer bytes = reply.getByteBuffer().asNIO();
        // A reply decoded from a message is a window on the message's bytes: offsets are kept relative to it.
        int base = bytes.arrayOffset() + bytes.position();
        TopLevelElements fields = new TopLevelElements(bytes.array(), base, bytes.remaining());
        boolean ok = false;
        int code = 0;
        BsonDocument clusterTime = null;
        long cursorId = 0;
        int cursorIdOffset = -1;
        String ns = null;
        while (fields.next()) {
            BsonType type = fields.type();
            if (fields.nameIs("ok")) {
                ok = fields.number() == 1.0;
            } else if (fields.nameIs("code")
                    && (type == BsonType.INT32 || type == BsonType.INT64 || type == BsonType.DOUBLE)) {
                code = (int) fields.number();
            } else if (type == BsonType.DOCUMENT && fields.nameIs("$clusterTime")) {
                clusterTime = fields.rawDocument();
            } else if (type == BsonType.DOCUMENT && fields.nameIs("cursor")) {
                TopLevelElements cursor = fields.inner();
                while (cursor.next()) {
                    if (cursor.type() == BsonType.INT64 && cursor.nameIs("id")) {
                        cursorIdOffset = cursor.valueStart() - base;
                        cursorId = cursor.int64();
                    } else if (cursor.type() == BsonType.STRING && cursor.nameIs("ns")) {
                        ns = cursor.string();
                    }
                }
            }
        }
        return new ReplyFacts(ok, code, clusterTime, cursorId, cursorIdOffset, ns);
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
