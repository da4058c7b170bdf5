package io.thermocline.wire;

/** A decoded message and the compressor it arrived with (null when it came uncompressed). */
public record Inbound(WireMessage message, Compressor compressedWith) {
}
