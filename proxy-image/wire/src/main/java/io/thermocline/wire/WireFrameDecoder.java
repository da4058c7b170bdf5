package io.thermocline.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * Frames the byte stream into whole messages and decodes each into an {@link Inbound}.
 * A bad length means the stream can no longer be framed: the decoder drops everything
 * after it and raises {@link MalformedMessageException}, and the handler closes the
 * connection. A frame that is well delimited but malformed raises the same exception
 * with the request id, so a server can answer it before closing.
 */
public class WireFrameDecoder extends ByteToMessageDecoder {

    private final IntSupplier maxMessageSize;
    private final boolean walkDocuments;
    private boolean broken;

    public WireFrameDecoder(int maxMessageSize) {
        this(() -> maxMessageSize, true);
    }

    /**
     * A limit that may change between messages, read before each: the frame's length and an OP_COMPRESSED
     * message's declared size are both bounded by it, so nothing larger is buffered or inflated (a proxy
     * gives a connection that has not logged in a smaller one).
     */
    public WireFrameDecoder(IntSupplier maxMessageSize) {
        this(maxMessageSize, true);
    }

    private WireFrameDecoder(IntSupplier maxMessageSize, boolean walkDocuments) {
        this.maxMessageSize = maxMessageSize;
        this.walkDocuments = walkDocuments;
    }

    /** For a connection to a MongoDB server: its documents are not walked element by element (see {@link WireCodec#decode(ByteBuf, int, boolean)}). */
    public static WireFrameDecoder forServerReplies(int maxMessageSize) {
        return new WireFrameDecoder(() -> maxMessageSize, false);
    }

    public WireFrameDecoder() {
        this(WireCodec.DEFAULT_MAX_MESSAGE_SIZE);
    }

    /** Whether part of a message has arrived and waits for the rest (a connection that never completes one can be timed out). */
    public boolean holdsPartialMessage() {
        return internalBuffer().isReadable();
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (broken) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in.readableBytes() < 4) {
            return;
        }
        int length = in.getIntLE(in.readerIndex());
        int maxMessageSize = this.maxMessageSize.getAsInt();
        if (length < WireCodec.HEADER_LENGTH || length > maxMessageSize) {
            broken = true;
            int requestId = in.readableBytes() >= 8 ? in.getIntLE(in.readerIndex() + 4) : 0;
            in.skipBytes(in.readableBytes());
            throw new MalformedMessageException(requestId, "message length " + length + " is outside 16.." + maxMessageSize + " bytes");
        }
        if (in.readableBytes() < length) {
            return;
        }
        ByteBuf frame = in.readSlice(length);
        try {
            out.add(WireCodec.decode(frame, maxMessageSize, walkDocuments));
        } catch (MalformedMessageException e) {
            broken = true;
            in.skipBytes(in.readableBytes());
            throw e;
        }
    }
}
