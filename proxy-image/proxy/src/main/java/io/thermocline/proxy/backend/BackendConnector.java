package io.thermocline.proxy.backend;

import com.mongodb.ServerAddress;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.thermocline.proxy.tls.TierTls;
import io.thermocline.wire.WireEncoder;
import io.thermocline.wire.WireFrameDecoder;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Opens framed connections to backend members on the proxy's event loops. */
public final class BackendConnector {
    private final Bootstrap bootstrap;
    private final Duration connectTimeout;
    private final int maxMessageSize;
    private final TierTls tls;

    public BackendConnector(EventLoopGroup group, Class<? extends SocketChannel> channelType, int maxMessageSize,
                            Duration connectTimeout) {
        this(group, channelType, maxMessageSize, connectTimeout, TierTls.off());
    }

    /** {@code tls}: TLS to the members with the tiers' CA, host names checked (issue 15). */
    public BackendConnector(EventLoopGroup group, Class<? extends SocketChannel> channelType, int maxMessageSize,
                            Duration connectTimeout, TierTls tls) {
        this.connectTimeout = connectTimeout;
        this.maxMessageSize = maxMessageSize;
        this.tls = tls;
        this.bootstrap = new Bootstrap().group(group).channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeout.toMillis())
                .handler(pipeline(null));
    }

    private ChannelInitializer<SocketChannel> pipeline(ServerAddress member) {
        return new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                if (member != null && tls.enabled()) {
                    ch.pipeline().addLast("tls", tls.handler(ch.alloc(), member));
                }
                ch.pipeline().addLast("frames", WireFrameDecoder.forServerReplies(maxMessageSize));
                ch.pipeline().addLast("encoder", new WireEncoder());
            }
        };
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public CompletableFuture<BackendConnection> connect(ServerAddress address, long generation) {
        return connect(address, generation, null);
    }

    /**
     * Connects on {@code loop} when given: a client request and the backend connection it borrows
     * then run on one thread, with no hand-off between event loops.
     */
    public CompletableFuture<BackendConnection> connect(ServerAddress address, long generation, EventLoop loop) {
        CompletableFuture<BackendConnection> result = new CompletableFuture<>();
        Bootstrap b = loop == null ? bootstrap.clone() : bootstrap.clone(loop);
        if (tls.enabled()) {
            b.handler(pipeline(address));
        }
        ChannelFuture f = b.connect(address.getHost(), address.getPort());
        f.addListener(done -> {
            if (done.isSuccess()) {
                result.complete(new BackendConnection(f.channel(), address, generation));
            } else {
                result.completeExceptionally(new BackendUnavailableException(
                        "cannot connect to " + address + ": " + done.cause().getMessage(), false));
            }
        });
        return result;
    }
}
