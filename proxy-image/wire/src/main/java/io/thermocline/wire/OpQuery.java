package io.thermocline.wire;

import org.bson.RawBsonDocument;

/** Legacy OP_QUERY (opcode 2004): still used by drivers for the first handshake. */
public record OpQuery(int requestId, int responseTo, int flags, String fullCollectionName, int numberToSkip,
                      int numberToReturn, RawBsonDocument query, RawBsonDocument returnFieldsSelector)
        implements WireMessage {

    @Override
    public int opCode() {
        return OpCode.OP_QUERY;
    }

    /** The database part of {@code db.$cmd}. */
    public String database() {
        int dot = fullCollectionName.indexOf('.');
        return dot < 0 ? fullCollectionName : fullCollectionName.substring(0, dot);
    }

    /** A command sent as OP_QUERY targets {@code <db>.$cmd}. */
    public boolean isCommand() {
        return fullCollectionName.endsWith(".$cmd");
    }
}
