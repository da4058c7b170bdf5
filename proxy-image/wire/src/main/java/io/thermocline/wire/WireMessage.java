package io.thermocline.wire;

/** A MongoDB wire protocol message, after framing and decompression. */
public sealed interface WireMessage permits OpMsg, OpQuery, OpReply {

    int requestId();

    int responseTo();

    int opCode();
}
