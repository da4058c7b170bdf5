package io.thermocline.proxy.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.thermocline.proxy.server.startup.StartingConnection;
import io.thermocline.wire.WireEncoder;
import io.thermocline.wire.WireFrameDecoder;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The port MongoDB clients connect to, with the event loops that serve it. {@link #bind} opens it before the proxy
 * behind it exists (the embedded default starts its tiers first, which takes seconds to tens of seconds): until
 * {@link ProxyServer#start} takes it over, every client is answered as a starting mongod answers
 * ({@link io.thermocline.proxy.server.startup.StartingReplies}), so drivers wait instead of failing on a refused
 * connection. At the takeover the connections accepted while starting are closed (drivers reconnect at once) and new
 * ones get the proxy's pipeline; the proxy owns the port and its event loops from then on.
 */
public final class ClientPort implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClientPort.class);
    /** While starting nothing large is worth buffering: a larger message closes the connection, which drivers retry too. */
    private static final int STARTING_MESSAGE_LIMIT = ClientConnection.UNAUTHENTICATED_MESSAGE_LIMIT;

    private final NettyTransport transport;
    private final EventLoopGroup group;
    private final ChannelGroup starting = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private volatile String stage = "starting";
    /** The proxy's pipeline once it has taken the port over; null while starting. Guarded by {@code this} with {@link #starting}. */
    private Consumer<ChannelPipeline> serving;

    private Channel channel;

    ClientPort(NettyTransport transport) {
        this.transport = transport;
        this.group = new MultiThreadIoEventLoopGroup(
                Math.max(2, Runtime.getRuntime().availableProcessors()),
                new DefaultThreadFactory("thermocline-proxy"),
                transport.ioHandler());
    }

    /**
     * Opens the client port now, answering "starting" until a proxy takes it over. {@code transport} is
     * {@code proxy.transport}; the proxy that takes the port over uses the same.
     */
    public static ClientPort bind(String host, int port, String transport) throws CannotListen {
        ClientPort p = new ClientPort(NettyTransport.choose(transport));
        try {
            p.listen(host, port);
        } catch (CannotListen e) {
            p.close();
            throw e;
        }
        LOG.info(
                "event=client_port_starting listen={} detail=\"clients are answered NotPrimaryOrSecondary until the proxy is up\"",
                p.address());
        return p;
    }

    /** What the process does now, quoted in the answers while starting ("starting the archive"). */
    public void stage(String what) {
        stage = Objects.requireNonNull(what);
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    NettyTransport transport() {
        return transport;
    }

    EventLoopGroup group() {
        return group;
    }

    boolean bound() {
        return channel != null;
    }

    Channel channel() {
        return channel;
    }

    void listen(String host, int port) throws CannotListen {
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        accepted(ch);
                    }
                });
        try {
            channel = bootstrap.bind(host, port).syncUninterruptibly().channel();
        } catch (Exception e) {
            if (CannotListen.isBindFailure(e)) {
                throw new CannotListen("MongoDB clients", host, port, e);
            }
            throw e;
        }
    }

    private void accepted(SocketChannel ch) {
        Consumer<ChannelPipeline> proxy;
        synchronized (this) {
            proxy = serving;
            if (proxy == null) {
                starting.add(ch);
            }
        }
        if (proxy != null) {
            proxy.accept(ch.pipeline());
            return;
        }
        ch.pipeline().addLast("frames", new WireFrameDecoder(STARTING_MESSAGE_LIMIT));
        ch.pipeline().addLast("encoder", new WireEncoder());
        ch.pipeline().addLast("starting", new StartingConnection(() -> stage));
    }

    /** The proxy takes the port over: new connections get {@code pipeline}, those accepted while starting are closed. */
    void serve(Consumer<ChannelPipeline> pipeline) {
        synchronized (this) {
            serving = Objects.requireNonNull(pipeline);
        }
        int closed = starting.size();
        starting.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (closed > 0) {
            LOG.info("event=client_port_serving starting_connections_closed={}", closed);
        }
    }

    /** Closes the port and its event loops, unless a proxy took it over: that proxy closes it. */
    @Override
    public void close() {
        synchronized (this) {
            if (serving != null) {
                return;
            }
        }
        if (channel != null) {
            channel.close().syncUninterruptibly();
        }
        starting.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
