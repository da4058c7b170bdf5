package io.thermocline.proxy.server.startup;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.server.handshake.Hello;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import io.thermocline.wire.Outbound;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client connection accepted while the proxy starts: each message is answered at once with {@link StartingReplies},
 * nothing is executed. The connection is closed when the proxy takes the port over.
 */
public final class StartingConnection extends SimpleChannelInboundHandler<Inbound> {
    private static final Logger LOG = LoggerFactory.getLogger(StartingConnection.class);

    private final Supplier<String> stage;

    /** {@code stage} says what the process is doing now ("starting the archive"), quoted in every answer. */
    public StartingConnection(Supplier<String> stage) {
        this.stage = stage;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Inbound inbound) {
        if (inbound.message() instanceof OpMsg msg) {
            if (msg.moreToCome()) {
                return; // mongod answers no failure of a fire-and-forget message
            }
            String name = msg.commandName();
            BsonDocument reply = Hello.isHello(name)
                    ? StartingReplies.hello(stage.get())
                    : StartingReplies.command(CommandTraits.of(name, msg.body()), stage.get());
            ctx.writeAndFlush(new Outbound(OpMsg.reply(msg.requestId(), reply), inbound.compressedWith()));
        } else if (inbound.message() instanceof OpQuery query) {
            // the legacy handshake
            ctx.writeAndFlush(new Outbound(
                    OpReply.reply(query.requestId(), StartingReplies.hello(stage.get())), inbound.compressedWith()));
        } else {
            ctx.close();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug(
                "event=starting_connection_error remote={} error=\"{}\"",
                ctx.channel().remoteAddress(),
                cause.toString());
        ctx.close();
    }
}
