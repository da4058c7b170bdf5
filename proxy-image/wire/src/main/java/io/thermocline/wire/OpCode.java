package io.thermocline.wire;

/** The opcodes Thermocline speaks; every other opcode is rejected as malformed. */
public final class OpCode {

    public static final int OP_REPLY = 1;
    public static final int OP_QUERY = 2004;
    public static final int OP_COMPRESSED = 2012;
    public static final int OP_MSG = 2013;

    private OpCode() {
    }
}
