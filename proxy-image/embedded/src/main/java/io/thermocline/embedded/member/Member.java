package io.thermocline.embedded.member;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.security.MemberSecurity;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.wire.WireCodec;
import io.thermocline.wire.WireEncoder;
import io.thermocline.wire.WireFrameDecoder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica-set member: a MongoDB wire front on 127.0.0.1 (the project's wire codec over
 * Netty) in front of its own storage engine. Killing it closes its port and connections;
 * restarting binds the configured port again, or, when none was configured, a fresh ephemeral
 * port: the old one may meanwhile be the local port of an outgoing connection (the kernel hands
 * the same range out), and the members advertise their new address in {@code hello.hosts}.
 */
public final class Member {
    private static final Logger log = LoggerFactory.getLogger(Member.class);

    private final ReplicationCoordinator coordinator;
    private final MemberState state;
    private final CommandDispatcher dispatcher;
    private final MemberSecurity security;
    private final EventLoopGroup group;
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final ExecutorService commands;
    private final int configuredPort;
    private int port;
    private Channel server;

    public Member(
            ReplicationCoordinator coordinator,
            MemberState state,
            SessionCatalog sessions,
            EventLoopGroup group,
            int port,
            boolean majorityByDefault,
            String threadPrefix,
            MemberSecurity security) {
        this.security = security;
        this.coordinator = coordinator;
        this.state = state;
        this.group = group;
        this.configuredPort = port;
        this.port = port;
        this.dispatcher = new CommandDispatcher(coordinator, state, sessions, majorityByDefault);
        AtomicInteger threads = new AtomicInteger();
        this.commands = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, threadPrefix + "-cmd-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Binds the configured port (a new ephemeral one each time when 0) and starts serving. */
    public synchronized void bind() {
        port = configuredPort;
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        security.install(ch.pipeline());
                        ch.pipeline()
                                .addLast(
                                        new WireFrameDecoder(WireCodec.DEFAULT_MAX_MESSAGE_SIZE),
                                        WireEncoder.INSTANCE,
                                        new MemberHandler(
                                                dispatcher,
                                                security,
                                                coordinator,
                                                state,
                                                commands,
                                                connectionIds.incrementAndGet()));
                    }
                });
        try {
            server = bootstrap
                    .bind(new InetSocketAddress("127.0.0.1", port))
                    .sync()
                    .channel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding 127.0.0.1:" + port, e);
        } catch (Exception e) {
            throw new IllegalStateException(
                    "cannot listen on 127.0.0.1:" + port + ": " + e.getMessage()
                            + "; choose a free port or 0 for an ephemeral one",
                    e);
        }
        port = ((InetSocketAddress) server.localAddress()).getPort();
        state.host("127.0.0.1:" + port);
        log.info("event=memberListening set={} member={} port={}", coordinator.setName(), state.index(), port);
    }

    /** Stops serving: closes the listening port and every client connection, as a crashed process would. */
    public synchronized void unbind() {
        if (server != null) {
            server.close().syncUninterruptibly();
            server = null;
        }
        connections.close().syncUninterruptibly();
        dispatcher.closeCursors();
    }

    public void shutdown() {
        state.stopping();
        coordinator.progress().signalAll(); // a statement held between documents sees it at once
        unbind();
        commands.shutdownNow();
    }

    /**
     * After {@link #shutdown}: waits until the commands it was running have returned, so the store can be closed under
     * none of them (a query still walking a tree when H2 closes fails the close). False if some still ran after
     * {@code timeout}.
     */
    public boolean awaitCommandsEnded(Duration timeout) throws InterruptedException {
        return commands.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public int index() {
        return state.index();
    }

    public int port() {
        return port;
    }

    public String host() {
        return "127.0.0.1:" + port;
    }

    public boolean isAlive() {
        return state.alive();
    }

    public boolean isPrimary() {
        return coordinator.isPrimary(state);
    }

    /** A connection string that talks to this member alone. */
    public String directConnectionString() {
        return "mongodb://" + host() + "/?directConnection=true";
    }

    /** Test hook: requests held on their way to this member ({@link DelayedRequests}). */
    public DelayedRequests delayedRequests() {
        return dispatcher.delayedRequests();
    }

    public MemberState state() {
        return state;
    }

    @Override
    public String toString() {
        return coordinator.setName() + "/" + host() + "(" + coordinator.role(state) + ")";
    }
}
