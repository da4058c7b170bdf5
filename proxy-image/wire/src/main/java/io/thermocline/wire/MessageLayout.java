package io.thermocline.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.bson.RawBsonDocument;

/**
 * The byte layout of each message kind as {@link WireCodec#encode} writes it: the header, an OP_MSG straight into
 * the outgoing buffer, and any message's body for compression or a checksum. Apart from the codec, whose other half
 * parses and validates what arrives.
 */
final class MessageLayout {

    private MessageLayout() {}

    /** The common case, every request and reply the proxy forwards: straight into the outgoing buffer, no copy in between. */
    static ByteBuf opMsg(ByteBufAllocator alloc, OpMsg msg) {
        ByteBuffer body = msg.body().getByteBuffer().asNIO();
        int length = WireCodec.HEADER_LENGTH + 4 + 1 + body.remaining();
        for (DocumentSequence s : msg.sequences()) {
            length += 1 + 4 + ByteBufUtil.utf8Bytes(s.identifier()) + 1;
            for (RawBsonDocument d : s.documents()) {
                length += d.getByteBuffer().remaining();
            }
        }
        ByteBuf out = alloc.buffer(length);
        header(out, length, msg.requestId(), msg.responseTo(), OpCode.OP_MSG);
        out.writeIntLE(msg.flagBits());
        out.writeByte(0);
        out.writeBytes(body);
        for (DocumentSequence s : msg.sequences()) {
            out.writeByte(1);
            int sizeAt = out.writerIndex();
            out.writeIntLE(0);
            ByteBufUtil.writeUtf8(out, s.identifier());
            out.writeByte(0);
            for (RawBsonDocument d : s.documents()) {
                out.writeBytes(d.getByteBuffer().asNIO());
            }
            out.setIntLE(sizeAt, out.writerIndex() - sizeAt);
        }
        return out;
    }

    static void header(ByteBuf out, int length, int requestId, int responseTo, int opCode) {
        out.writeIntLE(length).writeIntLE(requestId).writeIntLE(responseTo).writeIntLE(opCode);
    }

    /** The message after its header; an OP_MSG checksum covers the header too, so it is computed with it. */
    static byte[] body(WireMessage message) {
        ByteBuffer out;
        if (message instanceof OpMsg msg) {
            int size = 4 + 1 + msg.body().getByteBuffer().remaining();
            List<byte[]> identifiers = new ArrayList<>();
            for (DocumentSequence s : msg.sequences()) {
                byte[] id = s.identifier().getBytes(StandardCharsets.UTF_8);
                identifiers.add(id);
                size += 1 + 4 + id.length + 1;
                for (RawBsonDocument d : s.documents()) {
                    size += d.getByteBuffer().remaining();
                }
            }
            boolean checksum = msg.checksumPresent();
            out = ByteBuffer.allocate(size + (checksum ? 4 : 0)).order(ByteOrder.LITTLE_ENDIAN);
            out.putInt(msg.flagBits());
            out.put((byte) 0);
            put(out, msg.body());
            for (int i = 0; i < msg.sequences().size(); i++) {
                DocumentSequence s = msg.sequences().get(i);
                out.put((byte) 1);
                int sizeAt = out.position();
                out.putInt(0);
                out.put(identifiers.get(i)).put((byte) 0);
                for (RawBsonDocument d : s.documents()) {
                    put(out, d);
                }
                out.putInt(sizeAt, out.position() - sizeAt);
            }
            if (checksum) {
                CRC32C crc = new CRC32C();
                ByteBuffer head = ByteBuffer.allocate(WireCodec.HEADER_LENGTH)
                        .order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(WireCodec.HEADER_LENGTH + out.capacity())
                        .putInt(msg.requestId())
                        .putInt(msg.responseTo())
                        .putInt(OpCode.OP_MSG);
                crc.update(head.array());
                crc.update(out.array(), 0, out.position());
                out.putInt((int) crc.getValue());
            }
        } else if (message instanceof OpQuery q) {
            byte[] name = q.fullCollectionName().getBytes(StandardCharsets.UTF_8);
            int size = 4
                    + name.length
                    + 1
                    + 8
                    + q.query().getByteBuffer().remaining()
                    + (q.returnFieldsSelector() == null
                            ? 0
                            : q.returnFieldsSelector().getByteBuffer().remaining());
            out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
            out.putInt(q.flags())
                    .put(name)
                    .put((byte) 0)
                    .putInt(q.numberToSkip())
                    .putInt(q.numberToReturn());
            put(out, q.query());
            if (q.returnFieldsSelector() != null) {
                put(out, q.returnFieldsSelector());
            }
        } else {
            OpReply r = (OpReply) message;
            int size = 20;
            for (RawBsonDocument d : r.documents()) {
                size += d.getByteBuffer().remaining();
            }
            out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
            out.putInt(r.responseFlags())
                    .putLong(r.cursorId())
                    .putInt(r.startingFrom())
                    .putInt(r.documents().size());
            for (RawBsonDocument d : r.documents()) {
                put(out, d);
            }
        }
        return out.array();
    }

    private static void put(ByteBuffer out, RawBsonDocument document) {
        out.put(document.getByteBuffer().asNIO());
    }
}
