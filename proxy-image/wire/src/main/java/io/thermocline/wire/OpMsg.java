package io.thermocline.wire;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.NoSuchElementException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * OP_MSG (opcode 2013): one body document and any number of document sequences.
 * Flag bits per the OP_MSG specification.
 */
public record OpMsg(int requestId, int responseTo, int flagBits, RawBsonDocument body, List<DocumentSequence> sequences)
        implements WireMessage {

    public static final int CHECKSUM_PRESENT = 1;
    public static final int MORE_TO_COME = 1 << 1;
    public static final int EXHAUST_ALLOWED = 1 << 16;
    /** Bits 0-15 are required: a parser must fail on any it does not know. */
    static final int KNOWN_REQUIRED_BITS = CHECKSUM_PRESENT | MORE_TO_COME;

    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    public OpMsg {
        sequences = sequences == null ? List.of() : List.copyOf(sequences);
    }

    public static OpMsg reply(int responseTo, BsonDocument body) {
        return new OpMsg(WireCodec.nextRequestId(), responseTo, 0, raw(body), List.of());
    }

    public static OpMsg request(int requestId, BsonDocument body) {
        return new OpMsg(requestId, 0, 0, raw(body), List.of());
    }

    public static RawBsonDocument raw(BsonDocument document) {
        return document instanceof RawBsonDocument r ? r : new RawBsonDocument(document, CODEC);
    }

    /** Whether a command reply's body reports success ({@code ok: 1}), the field every reply carries. */
    public static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }

    @Override
    public int opCode() {
        return OpCode.OP_MSG;
    }

    public boolean checksumPresent() {
        return (flagBits & CHECKSUM_PRESENT) != 0;
    }

    public boolean moreToCome() {
        return (flagBits & MORE_TO_COME) != 0;
    }

    public boolean exhaustAllowed() {
        return (flagBits & EXHAUST_ALLOWED) != 0;
    }

    /** The same message with other flag bits (e.g. moreToCome set on an exhaust reply). */
    public OpMsg withFlagBits(int bits) {
        return new OpMsg(requestId, responseTo, bits, body, sequences);
    }

    /** The command's name: the body's first key, read from its bytes (the library's reader would be made for it). */
    public String commandName() {
        ByteBuffer bytes = body.getByteBuffer().asNIO();
        int name = bytes.position() + 5;
        if (bytes.get(name - 1) == 0) {
            throw new NoSuchElementException(); // as getFirstKey() of an empty document
        }
        for (int i = name; i < bytes.limit(); i++) {
            if (bytes.get(i) == 0) {
                return new String(bytes.array(), bytes.arrayOffset() + name, i - name, StandardCharsets.UTF_8);
            }
        }
        return body.getFirstKey(); // no terminator: the library's reader reports it
    }

    /** The target database ({@code $db}), or null when the client sent none. */
    public String database() {
        BsonValue db = body.get("$db");
        return db != null && db.isString() ? db.asString().getValue() : null;
    }

    /** The command as a server sees it: the body with each document sequence folded in as an array. */
    public BsonDocument command() {
        if (sequences.isEmpty()) {
            return body;
        }
        BsonDocument command = new BsonDocument();
        command.putAll(body);
        for (DocumentSequence sequence : sequences) {
            BsonArray documents = new BsonArray(sequence.documents().size());
            documents.addAll(sequence.documents());
            command.put(sequence.identifier(), documents);
        }
        return command;
    }
}
