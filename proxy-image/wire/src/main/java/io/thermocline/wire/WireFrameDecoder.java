package io.thermocline.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
 *
 * <p>The decoder reserves what it buffers of a frame from a {@link MessageBudget} as it arrives, and, once the whole
 * frame is here, what an {@code OP_COMPRESSED} header declares it inflates to, before inflating: refused, the frame is
 * dropped, the rest of it skipped as it arrives, and a {@link RefusedMessage} takes its place in the stream; deferred,
 * the decoder stops reading until {@link #resume()}.
 */
public class WireFrameDecoder extends ByteToMessageDecoder {

    /** OP_COMPRESSED's own header after the message header: original opcode, uncompressed size, compressor id. */
    private static final int COMPRESSED_HEADER_LENGTH = WireCodec.HEADER_LENGTH + 9;
    /** The message header and OP_MSG's flags: what a refusal reports. */
    private static final int REFUSAL_HEADER_LENGTH = WireCodec.HEADER_LENGTH + 4;

    private final IntSupplier maxMessageSize;
    private final boolean walkDocuments;
    private final MessageBudget budget;
    private boolean broken;
    /** Bytes of the frame being received reserved so far: what has arrived of it. */
    private long frameReserved;
    /** Whether what the frame inflates to is reserved too (once the whole frame is here). */
    private boolean inflationReserved;
    /** Bytes of a refused frame still to skip. */
    private long skipping;

    private boolean deferred;
    private ChannelHandlerContext context;
    private volatile long lastBytesNanos = System.nanoTime();

    public WireFrameDecoder(int maxMessageSize) {
        this(() -> maxMessageSize, true, MessageBudget.UNBOUNDED);
    }

    /**
     * A limit that may change between messages, read before each: the frame's length and an OP_COMPRESSED
     * message's declared size are both bounded by it, so nothing larger is buffered or inflated (a proxy
     * gives a connection that has not logged in a smaller one).
     */
    public WireFrameDecoder(IntSupplier maxMessageSize) {
        this(maxMessageSize, true, MessageBudget.UNBOUNDED);
    }

    /** With a budget for what this connection's messages hold, framed and inflated, until they are answered. */
    public WireFrameDecoder(IntSupplier maxMessageSize, MessageBudget budget) {
        this(maxMessageSize, true, budget);
    }

    private WireFrameDecoder(IntSupplier maxMessageSize, boolean walkDocuments, MessageBudget budget) {
        this.maxMessageSize = maxMessageSize;
        this.walkDocuments = walkDocuments;
        this.budget = budget;
    }

    /** For a connection to a MongoDB server: its documents are not walked element by element (see {@link WireCodec#decode(ByteBuf, int, boolean)}). */
    public static WireFrameDecoder forServerReplies(int maxMessageSize) {
        return new WireFrameDecoder(() -> maxMessageSize, false, MessageBudget.UNBOUNDED);
    }

    public WireFrameDecoder() {
        this(WireCodec.DEFAULT_MAX_MESSAGE_SIZE);
    }

    /** Whether part of a message has arrived and waits for the rest (a connection that never completes one can be timed out). */
    public boolean holdsPartialMessage() {
        return internalBuffer().isReadable();
    }

    /** When bytes last arrived (a message begun and then left incomplete can be timed out). */
    public long lastBytesNanos() {
        return lastBytesNanos;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof ByteBuf bytes && bytes.isReadable()) {
            lastBytesNanos = System.nanoTime();
        }
        super.channelRead(ctx, msg);
    }

    /** Whether the budget deferred the next frame: reading stays off until {@link #resume()}. */
    public boolean deferred() {
        return deferred;
    }

    /** After the connection released budget: asks again for a deferred frame, on the channel's event loop. */
    public void resume() {
        if (deferred && context != null && !context.isRemoved()) {
            deferred = false;
            try {
                channelRead(context, Unpooled.EMPTY_BUFFER);
            } catch (Exception e) {
                context.fireExceptionCaught(e); // where the pipeline sends what a read raises (a malformed frame)
            }
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        context = ctx;
        if (broken) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (skipping > 0) {
            int n = (int) Math.min(skipping, in.readableBytes());
            in.skipBytes(n);
            skipping -= n;
            return;
        }
        if (deferred || in.readableBytes() < 4) {
            return;
        }
        int length = in.getIntLE(in.readerIndex());
        int maxMessageSize = this.maxMessageSize.getAsInt();
        if (length < WireCodec.HEADER_LENGTH || length > maxMessageSize) {
            throw broken(
                    in,
                    in.readableBytes() >= 8 ? in.getIntLE(in.readerIndex() + 4) : 0,
                    "message length " + length + " is outside 16.." + maxMessageSize + " bytes");
        }
        int buffered = Math.min(length, in.readableBytes());
        if (buffered < length && buffered < REFUSAL_HEADER_LENGTH) {
            return; // a refusal names the request and its flags: wait for them before reserving
        }
        // what has arrived of the frame is reserved as it arrives, so a header alone holds no budget
        if (buffered > frameReserved && !admit(ctx, in, length, buffered - frameReserved, out)) {
            return;
        }
        frameReserved = buffered;
        if (buffered < length) {
            return;
        }
        int inflated = declaredInflatedSize(in, length, maxMessageSize);
        if (inflated > 0 && !inflationReserved) {
            if (!admit(ctx, in, length, inflated, out)) {
                return;
            }
            inflationReserved = true;
        }
        ByteBuf frame = in.readSlice(length);
        long held = frameReserved + (inflationReserved ? inflated : 0);
        frameReserved = 0;
        inflationReserved = false;
        try {
            out.add(WireCodec.decode(frame, maxMessageSize, walkDocuments).holding(held));
        } catch (MalformedMessageException e) {
            budget.release(held);
            throw broken(in, e);
        }
    }

    /** What an OP_COMPRESSED frame at {@code in}'s reader index says it inflates to, when in range; 0 otherwise (out of range is malformed, refused by WireCodec without inflating). */
    private static int declaredInflatedSize(ByteBuf in, int length, int maxMessageSize) {
        int at = in.readerIndex();
        if (length < COMPRESSED_HEADER_LENGTH || in.getIntLE(at + 12) != OpCode.OP_COMPRESSED) {
            return 0;
        }
        int inflated = in.getIntLE(at + 20);
        return inflated >= 0 && inflated <= maxMessageSize - WireCodec.HEADER_LENGTH ? inflated : 0;
    }

    /** Reserves {@code bytes} more for the frame at {@code in}'s reader index; false when the frame is not to be taken further now. */
    private boolean admit(ChannelHandlerContext ctx, ByteBuf in, int length, long bytes, List<Object> out) {
        MessageBudget.Admission admission = budget.reserve(bytes, frameReserved);
        if (admission instanceof MessageBudget.Admission.Deferred) {
            deferred = true;
            ctx.channel().config().setAutoRead(false);
            return false;
        }
        if (admission instanceof MessageBudget.Admission.Refused refused) {
            int at = in.readerIndex();
            int opCode = in.getIntLE(at + 12);
            boolean moreToCome = opCode == OpCode.OP_MSG
                    && length >= REFUSAL_HEADER_LENGTH
                    && (in.getIntLE(at + WireCodec.HEADER_LENGTH) & OpMsg.MORE_TO_COME) != 0;
            // its size: the frame's, or, refused when about to inflate, the frame's and what it inflates to
            out.add(new RefusedMessage(
                    in.getIntLE(at + 4),
                    opCode,
                    moreToCome,
                    Math.max(length, frameReserved + bytes),
                    refused.reason()));
            budget.release(frameReserved); // what it inflates to is never reserved before the frame is taken
            frameReserved = 0;
            int n = Math.min(length, in.readableBytes());
            in.skipBytes(n);
            skipping = length - n;
            return false;
        }
        return true;
    }

    private MalformedMessageException broken(ByteBuf in, int requestId, String message) {
        return broken(in, new MalformedMessageException(requestId, message));
    }

    private MalformedMessageException broken(ByteBuf in, MalformedMessageException e) {
        broken = true;
        in.skipBytes(in.readableBytes());
        return e;
    }

    /** A frame begun and admitted but never completed gives its reservation back with the decoder. */
    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (frameReserved > 0) {
            budget.release(frameReserved);
            frameReserved = 0;
        }
    }
}
