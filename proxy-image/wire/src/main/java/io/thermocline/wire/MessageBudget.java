package io.thermocline.wire;

/**
 * The memory a connection's messages may hold from the moment their frame begins to arrive until they are answered:
 * {@link WireFrameDecoder} asks for a frame's length, plus the size its {@code OP_COMPRESSED} header says it inflates
 * to, before buffering any of it, and hands the reservation on with the decoded message ({@link Inbound#heldBytes()}).
 * Whoever finishes with the message releases it.
 */
public interface MessageBudget {

    /** No bound: for connections to the proxy's own servers and peers, and for tests of framing alone. */
    MessageBudget UNBOUNDED = new MessageBudget() {
        @Override
        public Admission reserve(long bytes, long messageHolds) {
            return Admission.ADMITTED;
        }

        @Override
        public void release(long bytes) {}
    };

    /** {@code bytes} more for a message that holds {@code messageHolds} already (what has arrived of its frame). */
    Admission reserve(long bytes, long messageHolds);

    void release(long bytes);

    /** What {@link #reserve} decided. */
    sealed interface Admission {
        Admission ADMITTED = new Admitted();
        Admission DEFERRED = new Deferred();

        /** The bytes are the connection's until released. */
        record Admitted() implements Admission {}

        /**
         * Not now: the connection holds other messages that are not answered yet, and their release may make room. The
         * decoder stops reading until {@link WireFrameDecoder#resume()}.
         */
        record Deferred() implements Admission {}

        /** Never for this message: it is skipped unbuffered and answered with {@code reason}. */
        record Refused(String reason) implements Admission {}
    }
}
