package io.thermocline.proxy.command;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.bson.BsonBinaryReader;
import org.bson.BsonBoolean;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.DecoderContext;

/**
 * Walks the top-level elements of a BSON document by their byte offsets: names are compared as bytes and
 * values skipped by their lengths, and only a value the caller asks for is decoded. The bson library's reader
 * makes a String of every name it passes, which on the proxy's request path (every command and reply read for
 * a handful of fields) cost more than the fields themselves.
 *
 * <p>Lengths are checked against the document, so a malformed one (a member's reply is not walked when framed)
 * fails with {@link BsonSerializationException}, never reads past it.
 */
public final class TopLevelElements {
    private static final BsonValueCodec VALUES = new BsonValueCodec();
    private static final BsonDocumentCodec DOCUMENTS = new BsonDocumentCodec();
    private static final DecoderContext DECODING = DecoderContext.builder().build();

    private final byte[] bytes;
    /** The offset of the document's terminating zero. */
    private final int end;

    private int next;
    private int elementStart = -1;
    private byte type;
    private int nameEnd;
    private int valueEnd;

    public TopLevelElements(RawBsonDocument document) {
        this(document.getByteBuffer().asNIO());
    }

    private TopLevelElements(ByteBuffer document) {
        this(document.array(), document.arrayOffset() + document.position(), document.remaining());
    }

    /** The document at {@code offset} in {@code bytes}, within {@code length} bytes (its own length may be less). */
    public TopLevelElements(byte[] bytes, int offset, int length) {
        int size = length >= 4 && offset >= 0 && offset + length <= bytes.length ? int32(bytes, offset) : -1;
        if (size < 5 || size > length || bytes[offset + size - 1] != 0) {
            throw new BsonSerializationException("BSON document of " + size + " bytes is malformed in " + length);
        }
        this.bytes = bytes;
        this.next = offset + 4;
        this.end = offset + size - 1;
    }

    /** Moves to the next element; false at the end of the document. */
    public boolean next() {
        if (next == end) {
            elementStart = -1;
            return false;
        }
        elementStart = next;
        type = bytes[next];
        nameEnd = cstringEnd(next + 1);
        valueEnd = valueEnd(type, nameEnd + 1);
        next = valueEnd;
        return true;
    }

    public BsonType type() {
        return BsonType.findByValue(type);
    }

    /** Whether the element's name is {@code name}, compared without decoding the element's name. */
    public boolean nameIs(String name) {
        int at = elementStart + 1;
        int length = nameEnd - at;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 0x80) {
                return name().equals(name); // a name beyond ASCII: its UTF-8 bytes are not its chars
            }
            if (i >= length || bytes[at + i] != c) {
                return false;
            }
        }
        return length == name.length();
    }

    public String name() {
        return new String(bytes, elementStart + 1, nameEnd - elementStart - 1, StandardCharsets.UTF_8);
    }

    /** Where the element (its type byte) starts in the byte array. */
    public int elementStart() {
        return elementStart;
    }

    /** Where the element's value starts in the byte array. */
    public int valueStart() {
        return nameEnd + 1;
    }

    /** Where the element ends (the next one starts) in the byte array. */
    public int elementEnd() {
        return valueEnd;
    }

    /** The array the offsets point into. */
    public byte[] bytes() {
        return bytes;
    }

    /** The elements of this element's value, a document or an array. */
    public TopLevelElements inner() {
        if (type != BsonType.DOCUMENT.getValue() && type != BsonType.ARRAY.getValue()) {
            throw new BsonSerializationException("element " + name() + " is not a document");
        }
        return new TopLevelElements(bytes, valueStart(), valueEnd - valueStart());
    }

    /** The value as a number (ok, code): a double, int32, int64 or boolean; 0 for any other type. */
    public double number() {
        int at = valueStart();
        return switch (type()) {
            case DOUBLE -> Double.longBitsToDouble(int64(bytes, at));
            case INT32 -> int32(bytes, at);
            case INT64 -> int64(bytes, at);
            case BOOLEAN -> bytes[at] != 0 ? 1 : 0;
            default -> 0;
        };
    }

    /** The value of an INT64 element. */
    public long int64() {
        return int64(bytes, valueStart());
    }

    /** The value of a STRING element. */
    public String string() {
        int at = valueStart();
        return new String(bytes, at + 4, int32(bytes, at) - 1, StandardCharsets.UTF_8);
    }

    /** The value of a DOCUMENT element, as its own bytes (a copy: it never holds the message it came in). */
    public RawBsonDocument rawDocument() {
        int at = valueStart();
        byte[] copy = new byte[valueEnd - at];
        System.arraycopy(bytes, at, copy, 0, copy.length);
        return new RawBsonDocument(copy);
    }

    /** The value decoded, as the bson library's {@link BsonValueCodec} decodes it. */
    public BsonValue value() {
        int at = valueStart();
        switch (type()) {
            case INT32:
                return new BsonInt32(int32(bytes, at));
            case INT64:
                return new BsonInt64(int64(bytes, at));
            case DOUBLE:
                return new BsonDouble(Double.longBitsToDouble(int64(bytes, at)));
            case BOOLEAN:
                return BsonBoolean.valueOf(bytes[at] != 0);
            case STRING:
                return new BsonString(string());
            case TIMESTAMP:
                return new BsonTimestamp(int64(bytes, at));
            case DOCUMENT:
                try (BsonBinaryReader reader = new BsonBinaryReader(
                        ByteBuffer.wrap(bytes, at, valueEnd - at).slice())) {
                    return DOCUMENTS.decode(reader, DECODING);
                }
            default:
                // any other type: the element alone in a document of its own, read by the library's reader
                int length = valueEnd - elementStart;
                byte[] single = new byte[4 + length + 1];
                putInt32(single, single.length);
                System.arraycopy(bytes, elementStart, single, 4, length);
                try (BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(single))) {
                    reader.readStartDocument();
                    reader.readBsonType();
                    reader.readName();
                    return VALUES.decode(reader, DECODING);
                }
        }
    }

    private int cstringEnd(int from) {
        for (int i = from; i < end; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        throw new BsonSerializationException("unterminated element name in a BSON document");
    }

    /** Where a value of {@code type} starting at {@code at} ends, checked against the document's end. */
    private int valueEnd(byte type, int at) {
        long length;
        switch (type) {
            case 0x06, 0x0A, (byte) 0xFF, 0x7F -> length = 0; // undefined, null, min key, max key
            case 0x08 -> length = 1; // boolean
            case 0x10 -> length = 4; // int32
            case 0x01, 0x09, 0x11, 0x12 -> length = 8; // double, date, timestamp, int64
            case 0x07 -> length = 12; // object id
            case 0x13 -> length = 16; // decimal128
            case 0x02, 0x0D, 0x0E -> length = 4L + sized(at, 1); // string, javascript, symbol
            case 0x03, 0x04, 0x0F -> length = sized(at, 5); // document, array, code with scope
            case 0x05 -> length = 5L + sized(at, 0); // binary: length, subtype, bytes
            case 0x0C -> length = 4L + sized(at, 1) + 12; // db pointer: string, object id
            case 0x0B -> { // regular expression: two cstrings
                return cstringEnd(cstringEnd(at) + 1) + 1;
            }
            default ->
                throw new BsonSerializationException(
                        "unknown BSON type 0x" + Integer.toHexString(type & 0xff) + " for element " + name());
        }
        if (at + length > end) {
            throw new BsonSerializationException("element " + name() + " overruns its BSON document");
        }
        return (int) (at + length);
    }

    private int sized(int at, int minimum) {
        if (at + 4 > end) {
            throw new BsonSerializationException("element " + name() + " overruns its BSON document");
        }
        int size = int32(bytes, at);
        if (size < minimum) {
            throw new BsonSerializationException("element " + name() + " has a negative or short length " + size);
        }
        return size;
    }

    static int int32(byte[] b, int at) {
        return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
    }

    static long int64(byte[] b, int at) {
        return (int32(b, at) & 0xffffffffL) | (long) int32(b, at + 4) << 32;
    }

    static void putInt32(byte[] b, int value) {
        b[0] = (byte) value;
        b[1] = (byte) (value >>> 8);
        b[2] = (byte) (value >>> 16);
        b[3] = (byte) (value >>> 24);
    }
}
