package io.thermocline.wire;

/**
 * A decoded message, the compressor it arrived with (null when it came uncompressed), and the bytes of its connection's
 * {@link MessageBudget} it holds until it is answered (0 when decoded without a budget).
 */
public record Inbound(WireMessage message, Compressor compressedWith, long heldBytes) {

    public Inbound(WireMessage message, Compressor compressedWith) {
        this(message, compressedWith, 0);
    }

    Inbound holding(long bytes) {
        return new Inbound(message, compressedWith, bytes);
    }
}
