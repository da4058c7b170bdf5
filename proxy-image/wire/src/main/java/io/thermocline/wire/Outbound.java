package io.thermocline.wire;

/** A message to send, compressed with {@code compressor} unless it is null. */
public record Outbound(WireMessage message, Compressor compressor) {

    public static Outbound plain(WireMessage message) {
        return new Outbound(message, null);
    }
}
