package io.thermocline.wire;

import java.util.List;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/** Legacy OP_REPLY (opcode 1): the answer to an OP_QUERY handshake. */
public record OpReply(int requestId, int responseTo, int responseFlags, long cursorId, int startingFrom,
                      List<RawBsonDocument> documents) implements WireMessage {

    public OpReply {
        documents = List.copyOf(documents);
    }

    public static OpReply reply(int responseTo, BsonDocument document) {
        return new OpReply(WireCodec.nextRequestId(), responseTo, 0, 0, 0, List.of(OpMsg.raw(document)));
    }

    @Override
    public int opCode() {
        return OpCode.OP_REPLY;
    }
}
