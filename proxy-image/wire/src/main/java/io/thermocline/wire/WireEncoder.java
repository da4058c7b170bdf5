package io.thermocline.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/** Writes {@link Outbound} messages; stateless, so one instance serves every channel. */
@ChannelHandler.Sharable
public class WireEncoder extends MessageToMessageEncoder<Outbound> {

    public static final WireEncoder INSTANCE = new WireEncoder();

    @Override
    protected void encode(ChannelHandlerContext ctx, Outbound msg, List<Object> out) {
        ByteBuf buf = WireCodec.encode(ctx.alloc(), msg);
        out.add(buf);
    }
}
