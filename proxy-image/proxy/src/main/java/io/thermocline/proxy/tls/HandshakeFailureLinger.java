package io.thermocline.proxy.tls;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;

import java.util.concurrent.TimeUnit;

/**
 * Lets a client read the alert of a TLS handshake the proxy failed (no or an untrusted client
 * certificate): closing at once while the client still sends its handshake flight makes the kernel
 * answer with a reset, which discards the alert from the client's receive buffer, so the client saw
 * "connection reset" instead of the reason. After a failed handshake the proxy half-closes instead,
 * drops what still arrives, and closes when the client does, at most {@link #LINGER_MILLIS} later.
 * Sits before the TLS handler, so it sees that handler's close and the raw bytes.
 */
final class HandshakeFailureLinger extends ChannelDuplexHandler {
    static final long LINGER_MILLIS = 1000;
    private boolean lingering;

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        boolean failed = ssl != null && ssl.handshakeFuture().isDone() && !ssl.handshakeFuture().isSuccess();
        if (lingering) {
            // the TLS handler and the connection's error handler both close: the linger's own close ends both
            ctx.channel().closeFuture().addListener(closed -> promise.trySuccess());
            return;
        }
        if (!failed || !(ctx.channel() instanceof DuplexChannel duplex) || !ctx.channel().isActive()) {
            ctx.close(promise);
            return;
        }
        lingering = true;
        // the empty write completes after the alert's, so the half-close cannot cut the alert off
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(written -> duplex.shutdownOutput()
                .addListener(shut -> ctx.executor().schedule(() -> ctx.close(promise), LINGER_MILLIS, TimeUnit.MILLISECONDS)));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (lingering) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ctx.fireChannelRead(msg);
    }
}
