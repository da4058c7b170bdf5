package io.thermocline.wire;

import org.bson.BsonSerializationException;

/**
 * Checks the structure of a BSON document through and through, as the bson library's reader reads it (every
 * length, type, name and string terminator, nested documents' sizes, documents nested at most 200 deep), without
 * decoding it: the reader makes a String of every element's name, which on the proxy's path (every client
 * message is checked where it is decoded) cost more than the check itself. What it accepts and refuses is the
 * reader's (WireCodecTest compares the two on mutated documents).
 */
final class BsonStructure {
    static final int MAX_DEPTH = 200;

    private final byte[] bytes;
    /** The end of the outermost document: nothing is read at or past it. */
    private final int limit;

    private BsonStructure(byte[] bytes, int limit) {
        this.bytes = bytes;
        this.limit = limit;
    }

    /** Checks the document of {@code size} bytes at {@code offset}; throws {@link BsonSerializationException}. */
    static void check(byte[] bytes, int offset, int size) {
        new BsonStructure(bytes, offset + size).document(offset, 0);
    }

    /** Checks the document at {@code at}; returns where it ends. */
    private int document(int at, int depth) {
        if (depth > MAX_DEPTH) {
            throw new BsonSerializationException("documents are nested deeper than " + MAX_DEPTH + " levels");
        }
        return elements(at, depth);
    }

    /** A document's or an array's elements (an array's depth is not limited by itself, as in the reader's walk). */
    private int elements(int at, int depth) {
        int size = size(at);
        int p = at + 4;
        while (true) {
            if (p >= limit) {
                throw new BsonSerializationException("BSON document is cut short before its terminator");
            }
            byte type = bytes[p++];
            if (type == 0) {
                break;
            }
            p = cstringEnd(p) + 1;
            p = switch (type) {
                case 0x03 -> document(p, depth + 1);
                case 0x04 -> elements(p, depth + 1);
                case 0x0F -> javaScriptWithScope(p, depth);
                case 0x02 -> string(p);
                case 0x06, 0x0A, (byte) 0xFF, 0x7F -> p; // undefined, null, min key, max key
                case 0x08 -> skip(p, 1);
                case 0x10 -> skip(p, 4);
                case 0x01, 0x09, 0x11, 0x12 -> skip(p, 8);
                case 0x07 -> skip(p, 12);
                case 0x13 -> skip(p, 16);
                case 0x05 -> skip(p + 4, (long) size(p) + 1); // binary: length, subtype, bytes
                case 0x0D, 0x0E -> skip(p + 4, size(p)); // javascript, symbol: skipped by length, as the reader does
                case 0x0C -> skip(p + 4, (long) size(p) + 12); // db pointer
                case 0x0B -> cstringEnd(cstringEnd(p) + 1) + 1; // regular expression
                default ->
                    throw new BsonSerializationException(
                            "Detected unknown BSON type \"\\x" + Integer.toHexString(type & 0xff) + "\"");
            };
        }
        if (p - at != size) {
            throw new BsonSerializationException("Expected size to be " + size + ", not " + (p - at) + ".");
        }
        return p;
    }

    private int javaScriptWithScope(int at, int depth) {
        int size = size(at);
        int end = document(string(at + 4), depth + 1);
        if (end - at != size) {
            throw new BsonSerializationException("Expected size to be " + size + ", not " + (end - at) + ".");
        }
        return end;
    }

    /** A string value: a positive length, the bytes there, a terminating zero. */
    private int string(int at) {
        int size = size(at);
        if (size <= 0) {
            throw new BsonSerializationException(
                    "While decoding a BSON string found a size that is not a positive number: " + size);
        }
        int end = skip(at + 4, size);
        if (bytes[end - 1] != 0) {
            throw new BsonSerializationException("Found a BSON string that is not null-terminated");
        }
        return end;
    }

    /** A length at {@code at}: four bytes there, not negative. */
    private int size(int at) {
        if (at + 4 > limit) {
            throw new BsonSerializationException("BSON document is cut short in a length");
        }
        int size = (bytes[at] & 0xff)
                | (bytes[at + 1] & 0xff) << 8
                | (bytes[at + 2] & 0xff) << 16
                | (bytes[at + 3] & 0xff) << 24;
        if (size < 0) {
            throw new BsonSerializationException("Size " + size + " is not valid because it is negative.");
        }
        return size;
    }

    private int skip(int at, long length) {
        if (at + length > limit) {
            throw new BsonSerializationException("a value of " + length + " bytes overruns its BSON document");
        }
        return (int) (at + length);
    }

    private int cstringEnd(int from) {
        for (int i = from; i < limit; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        throw new BsonSerializationException("Found a BSON string that is not null-terminated");
    }
}
