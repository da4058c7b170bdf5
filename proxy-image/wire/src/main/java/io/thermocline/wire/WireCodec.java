package io.thermocline.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonSerializationException;
import org.bson.RawBsonDocument;

/**
 * Parses and writes whole wire messages (header included). Parsing checks every length,
 * the OP_MSG checksum and flag bits, and the structure of every BSON document, so a
 * malformed message fails here with a {@link MalformedMessageException} and never
 * later in the code that acts on it. The byte layout it writes is {@link MessageLayout}'s.
 */
public final class WireCodec {

    public static final int HEADER_LENGTH = 16;
    public static final int DEFAULT_MAX_MESSAGE_SIZE = 48_000_000;
    /** BSON's own limit; MongoDB allows 16 KiB over it for the command around a document. */
    public static final int MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;

    private static final AtomicInteger REQUEST_IDS = new AtomicInteger();

    private WireCodec() {}

    public static int nextRequestId() {
        return REQUEST_IDS.incrementAndGet() & Integer.MAX_VALUE;
    }

    /** Decodes one framed message; the buffer holds exactly the message and is not released. */
    public static Inbound decode(ByteBuf frame) {
        return decode(frame, DEFAULT_MAX_MESSAGE_SIZE);
    }

    public static Inbound decode(ByteBuf frame, int maxMessageSize) {
        return decode(frame, maxMessageSize, true);
    }

    /**
     * {@code walkDocuments} false skips the element-by-element walk of each document (lengths and
     * terminators are still checked): for replies from a MongoDB server, which validated them,
     * where the walk would only cost the proxy CPU on its hottest path.
     */
    public static Inbound decode(ByteBuf frame, int maxMessageSize, boolean walkDocuments) {
        byte[] bytes = new byte[frame.readableBytes()];
        frame.getBytes(frame.readerIndex(), bytes);
        return decode(bytes, maxMessageSize, walkDocuments);
    }

    public static Inbound decode(byte[] message, int maxMessageSize) {
        return decode(message, maxMessageSize, true);
    }

    public static Inbound decode(byte[] message, int maxMessageSize, boolean walkDocuments) {
        if (message.length < HEADER_LENGTH) {
            throw new MalformedMessageException(
                    0, "message of " + message.length + " bytes is shorter than the 16-byte header");
        }
        ByteBuffer in = ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN);
        int length = in.getInt();
        int requestId = in.getInt();
        int responseTo = in.getInt();
        int opCode = in.getInt();
        if (length != message.length) {
            throw new MalformedMessageException(
                    requestId, "header says " + length + " bytes but the message has " + message.length);
        }
        try {
            if (opCode == OpCode.OP_COMPRESSED) {
                return decompress(in, requestId, responseTo, maxMessageSize, walkDocuments);
            }
            return new Inbound(decodeBody(opCode, in, requestId, responseTo, message, walkDocuments), null);
        } catch (MalformedMessageException e) {
            throw e;
        } catch (BsonSerializationException
                | IllegalArgumentException
                | IndexOutOfBoundsException
                | BufferUnderflowException
                | BsonInvalidOperationException e) {
            throw new MalformedMessageException(
                    requestId, "malformed message (opcode " + opCode + "): " + e.getMessage(), e);
        }
    }

    private static Inbound decompress(ByteBuffer in, int requestId, int responseTo, int maxMessageSize, boolean walk) {
        if (in.remaining() < 9) {
            throw new MalformedMessageException(requestId, "OP_COMPRESSED is too short for its own header");
        }
        int originalOpCode = in.getInt();
        int uncompressedSize = in.getInt();
        int compressorId = in.get() & 0xff;
        Compressor compressor = Compressor.byId(compressorId)
                .orElseThrow(() -> new MalformedMessageException(
                        requestId,
                        "OP_COMPRESSED uses unknown compressor id " + compressorId
                                + "; supported: noop 0, snappy 1, zlib 2, zstd 3"));
        if (originalOpCode == OpCode.OP_COMPRESSED) {
            throw new MalformedMessageException(requestId, "OP_COMPRESSED may not wrap another OP_COMPRESSED");
        }
        if (uncompressedSize < 0 || uncompressedSize > maxMessageSize - HEADER_LENGTH) {
            throw new MalformedMessageException(
                    requestId,
                    "OP_COMPRESSED declares " + uncompressedSize + " uncompressed bytes; the limit is "
                            + (maxMessageSize - HEADER_LENGTH));
        }
        byte[] compressed = new byte[in.remaining()];
        in.get(compressed);
        byte[] body = compressor.decompress(compressed, uncompressedSize);
        byte[] whole = new byte[HEADER_LENGTH + body.length];
        ByteBuffer.wrap(whole)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putInt(whole.length)
                .putInt(requestId)
                .putInt(responseTo)
                .putInt(originalOpCode)
                .put(body);
        ByteBuffer inner = ByteBuffer.wrap(whole).order(ByteOrder.LITTLE_ENDIAN);
        inner.position(HEADER_LENGTH);
        return new Inbound(decodeBody(originalOpCode, inner, requestId, responseTo, whole, walk), compressor);
    }

    private static WireMessage decodeBody(
            int opCode, ByteBuffer in, int requestId, int responseTo, byte[] message, boolean walk) {
        return switch (opCode) {
            case OpCode.OP_MSG -> decodeOpMsg(in, requestId, responseTo, message, walk);
            case OpCode.OP_QUERY -> decodeOpQuery(in, requestId, responseTo, message, walk);
            case OpCode.OP_REPLY -> decodeOpReply(in, requestId, responseTo, message, walk);
            default ->
                throw new MalformedMessageException(
                        requestId,
                        "opcode " + opCode
                                + " is not supported; use OP_MSG (2013), or OP_QUERY (2004) for the handshake");
        };
    }

    private static OpMsg decodeOpMsg(ByteBuffer in, int requestId, int responseTo, byte[] message, boolean walk) {
        int flags = in.getInt();
        int unknownRequired = flags & 0xffff & ~OpMsg.KNOWN_REQUIRED_BITS;
        if (unknownRequired != 0) {
            throw new MalformedMessageException(
                    requestId, "OP_MSG sets unknown required flag bits 0x" + Integer.toHexString(unknownRequired));
        }
        int end = message.length;
        if ((flags & OpMsg.CHECKSUM_PRESENT) != 0) {
            if (end - in.position() < 4) {
                throw new MalformedMessageException(
                        requestId, "OP_MSG says a checksum is present but has no room for one");
            }
            end -= 4;
            CRC32C crc = new CRC32C();
            crc.update(message, 0, end);
            int expected = ByteBuffer.wrap(message, end, 4)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .getInt();
            if ((int) crc.getValue() != expected) {
                throw new MalformedMessageException(requestId, "OP_MSG checksum does not match its contents");
            }
        }
        RawBsonDocument body = null;
        List<DocumentSequence> sequences = new ArrayList<>();
        while (in.position() < end) {
            int kind = in.get();
            if (kind == 0) {
                if (body != null) {
                    throw new MalformedMessageException(requestId, "OP_MSG has more than one body section (kind 0)");
                }
                body = document(in, end, requestId, message, walk);
            } else if (kind == 1) {
                int start = in.position();
                int size = in.getInt();
                if (size < 5 || start + size > end) {
                    throw new MalformedMessageException(
                            requestId, "OP_MSG document sequence size " + size + " does not fit the message");
                }
                int sectionEnd = start + size;
                String identifier = cstring(in, sectionEnd, requestId, message);
                List<RawBsonDocument> documents = new ArrayList<>();
                while (in.position() < sectionEnd) {
                    documents.add(document(in, sectionEnd, requestId, message, walk));
                }
                sequences.add(new DocumentSequence(identifier, documents));
            } else {
                throw new MalformedMessageException(
                        requestId, "OP_MSG section kind " + kind + " is unknown; kinds are 0 and 1");
            }
        }
        if (in.position() != end) {
            throw new MalformedMessageException(requestId, "OP_MSG sections overrun the message");
        }
        if (body == null) {
            throw new MalformedMessageException(requestId, "OP_MSG has no body section (kind 0)");
        }
        if (emptyDocument(body)) {
            throw new MalformedMessageException(
                    requestId, "OP_MSG body is an empty document; it must start with the command name");
        }
        // no sections beyond the body (nearly every message): an immutable empty list, which OpMsg keeps as it is
        return new OpMsg(requestId, responseTo, flags, body, sequences.isEmpty() ? List.of() : sequences);
    }

    private static OpQuery decodeOpQuery(ByteBuffer in, int requestId, int responseTo, byte[] message, boolean walk) {
        int flags = in.getInt();
        String collection = cstring(in, message.length, requestId, message);
        int skip = in.getInt();
        int toReturn = in.getInt();
        RawBsonDocument query = document(in, message.length, requestId, message, walk);
        RawBsonDocument selector =
                in.position() < message.length ? document(in, message.length, requestId, message, walk) : null;
        if (in.position() != message.length) {
            throw new MalformedMessageException(
                    requestId, "OP_QUERY has " + (message.length - in.position()) + " trailing bytes");
        }
        return new OpQuery(requestId, responseTo, flags, collection, skip, toReturn, query, selector);
    }

    private static OpReply decodeOpReply(ByteBuffer in, int requestId, int responseTo, byte[] message, boolean walk) {
        int flags = in.getInt();
        long cursorId = in.getLong();
        int startingFrom = in.getInt();
        int numberReturned = in.getInt();
        if (numberReturned < 0) {
            throw new MalformedMessageException(requestId, "OP_REPLY numberReturned is negative");
        }
        List<RawBsonDocument> documents = new ArrayList<>();
        for (int i = 0; i < numberReturned; i++) {
            documents.add(document(in, message.length, requestId, message, walk));
        }
        if (in.position() != message.length) {
            throw new MalformedMessageException(
                    requestId, "OP_REPLY has trailing bytes after " + numberReturned + " documents");
        }
        return new OpReply(requestId, responseTo, flags, cursorId, startingFrom, documents);
    }

    /** Whether a document's first element is its terminator (what {@link RawBsonDocument#isEmpty()} reads, without a reader). */
    private static boolean emptyDocument(RawBsonDocument document) {
        ByteBuffer bytes = document.getByteBuffer().asNIO();
        return bytes.get(bytes.position() + 4) == 0;
    }

    private static String cstring(ByteBuffer in, int end, int requestId, byte[] message) {
        int start = in.position();
        for (int i = start; i < end; i++) {
            if (message[i] == 0) {
                in.position(i + 1);
                return new String(message, start, i - start, StandardCharsets.UTF_8);
            }
        }
        throw new MalformedMessageException(requestId, "unterminated string in message");
    }

    /** A BSON document at the buffer's position, checked through and through, without copying its bytes. */
    private static RawBsonDocument document(ByteBuffer in, int end, int requestId, byte[] message, boolean walk) {
        int start = in.position();
        if (end - start < 5) {
            throw new MalformedMessageException(requestId, "BSON document is cut short");
        }
        int size = ByteBuffer.wrap(message, start, 4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .getInt();
        if (size < 5 || size > end - start) {
            throw new MalformedMessageException(requestId, "BSON document size " + size + " does not fit the message");
        }
        if (message[start + size - 1] != 0) {
            throw new MalformedMessageException(requestId, "BSON document does not end with a zero byte");
        }
        RawBsonDocument document = new RawBsonDocument(message, start, size);
        if (walk) {
            validate(document, requestId);
        }
        in.position(start + size);
        return document;
    }

    private static void validate(RawBsonDocument document, int requestId) {
        ByteBuffer bytes = document.getByteBuffer().asNIO();
        try {
            BsonStructure.check(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        } catch (BsonSerializationException e) {
            throw new MalformedMessageException(requestId, "invalid BSON document: " + e.getMessage(), e);
        }
    }

    /** Encodes a message, compressed when the outbound says so. */
    public static ByteBuf encode(ByteBufAllocator alloc, Outbound outbound) {
        WireMessage message = outbound.message();
        if (outbound.compressor() == null && message instanceof OpMsg msg && !msg.checksumPresent()) {
            return MessageLayout.opMsg(alloc, msg);
        }
        byte[] body = MessageLayout.body(message);
        Compressor compressor = outbound.compressor();
        if (compressor == null) {
            ByteBuf out = alloc.buffer(HEADER_LENGTH + body.length);
            MessageLayout.header(
                    out, HEADER_LENGTH + body.length, message.requestId(), message.responseTo(), message.opCode());
            out.writeBytes(body);
            return out;
        }
        byte[] compressed = compressor.compress(body);
        int length = HEADER_LENGTH + 9 + compressed.length;
        ByteBuf out = alloc.buffer(length);
        MessageLayout.header(out, length, message.requestId(), message.responseTo(), OpCode.OP_COMPRESSED);
        out.writeIntLE(message.opCode());
        out.writeIntLE(body.length);
        out.writeByte(compressor.id());
        out.writeBytes(compressed);
        return out;
    }

    /** Convenience for tests and tools: the whole message as bytes. */
    public static byte[] encodeToBytes(Outbound outbound) {
        ByteBuf buf = encode(Unpooled.buffer().alloc(), outbound);
        try {
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return bytes;
        } finally {
            buf.release();
        }
    }
}
