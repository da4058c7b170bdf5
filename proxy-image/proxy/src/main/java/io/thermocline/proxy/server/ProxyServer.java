package io.thermocline.proxy.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.ProxyCursorIds;
import io.thermocline.proxy.fleet.ClusterSecret;
import io.thermocline.proxy.fleet.Fleet;
import io.thermocline.proxy.gateway.Backends;
import io.thermocline.proxy.http.HttpEndpoint;
import io.thermocline.proxy.http.Readiness;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.server.cursors.CursorPeers;
import io.thermocline.proxy.server.handshake.Handshake;
import io.thermocline.proxy.server.handshake.Hello;
import io.thermocline.proxy.server.memory.MessageMemory;
import io.thermocline.proxy.tiered.TieredProxy;
import io.thermocline.proxy.tiered.TieredRouting;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.wire.WireEncoder;
import io.thermocline.wire.WireFrameDecoder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MongoDB-wire proxy: accepts client connections, answers the handshake as a mongos and
 * forwards commands to the archive tier (pass-through; tiered routing comes on top of this).
 */
public final class ProxyServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);

    private final ProxySettings settings;
    private final ProxyMetrics metrics = new ProxyMetrics();
    private final NettyTransport transport;
    private final EventLoopGroup group;
    private final Backends backends;
    private final CommandDispatcher dispatcher;
    private final Hello hello;
    private final TieredRouting tiered;
    private final Fleet fleet;
    private final ProxySecurity security;
    private final MessageMemory messageMemory;
    private final ChannelGroup clients = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicInteger acceptedClients = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong connectionIds = new AtomicLong();
    private volatile boolean draining;
    private final WriteRefusals writeRefusals = new WriteRefusals();
    private final ClientPort clientPort;
    private Channel serverChannel;
    private HttpEndpoint http;

    public ProxyServer(ProxySettings settings) {
        this(settings, null);
    }

    /**
     * The proxy one {@link ThermoclineConfig} describes: with a fast tier and at least one collection
     * policy it routes tiered namespaces across both tiers; otherwise it is the plain pass-through proxy.
     */
    public static ProxyServer create(ThermoclineConfig config) {
        return create(config, ProxySettings.from(config), TieredProxy.Options.defaults());
    }

    /**
     * The same, serving clients on a port opened earlier ({@link ClientPort#bind}) that answered "starting" until now;
     * its listen address wins over {@code proxy.listenHost}/{@code proxy.port}.
     */
    public static ProxyServer create(ThermoclineConfig config, ClientPort port) {
        return create(config, ProxySettings.from(config), TieredProxy.Options.defaults(), port);
    }

    /** Clients authenticate and are authorized as {@code config.auth} says, over TLS as {@code config.tls} says (issue 15). */
    public static ProxyServer create(ThermoclineConfig config, ProxySettings settings, TieredProxy.Options options) {
        return create(config, settings, options, null);
    }

    private static ProxyServer create(
            ThermoclineConfig config, ProxySettings settings, TieredProxy.Options options, ClientPort port) {
        ProxySecurity security = ProxySecurity.from(config);
        if (config.fleet().namesPeers() && !config.fleet().hasPeers()) {
            LOG.warn("event=fleet_peers_off reason=\"fleet.peerService or fleet.peers is set without fleet.secretFile\""
                    + " action=\"mount the cluster secret and set fleet.secretFile to link the replicas; until then getMore"
                    + " of another replica's cursor gets CursorNotFound and budgets are divided by fleet.replicas\"");
        }
        return new ProxyServer(
                settings,
                TieredProxy.routing(config, settings.instanceId(), options).orElse(null),
                security,
                port);
    }

    /**
     * A tiering proxy: {@code layer} routes commands on tiered namespaces once the server gives it the way to each
     * tier (see {@link TieredProxy}); null makes a pass-through proxy. The server closes it.
     */
    public ProxyServer(ProxySettings settings, TieredProxy.Layer layer) {
        this(settings, layer, ProxySecurity.disabled());
    }

    /** With client authentication and authorization ({@code auth.*}, see docs/security.md); the server closes {@code security}. */
    public ProxyServer(ProxySettings settings, TieredProxy.Layer layer, ProxySecurity security) {
        this(settings, layer, security, null);
    }

    /**
     * Serving clients on {@code port} when it is not null (opened earlier by {@link ClientPort#bind}, with the same
     * {@code proxy.transport}); the proxy owns it from then on. Connections it accepted while starting are plain
     * TCP even when {@code tls.*} asks for TLS: TLS clients fail their handshake then, which drivers retry.
     */
    private ProxyServer(ProxySettings settings, TieredProxy.Layer layer, ProxySecurity security, ClientPort port) {
        this.settings = settings;
        this.security = security;
        this.messageMemory = new MessageMemory(settings.messageMemory());
        metrics.messageMemoryFrom(messageMemory::held, messageMemory::refused);
        metrics.alsoExpose(security.metrics().registry());
        // one set of event loops for the client port and the backends: a request never crosses threads
        this.clientPort = port != null ? port : new ClientPort(NettyTransport.choose(settings.transport()));
        this.transport = clientPort.transport();
        this.group = clientPort.group();
        // Replies from a member can be as large as the member allows, whatever the client-side limit.
        // Each tier's own connector: TLS as tls.tierCaFile or its URI asks (a URI with tls=true is never reached in
        // plain text).
        this.backends = TierWiring.backends(settings, group, transport, security, metrics);
        CursorRegistry cursors = new CursorRegistry(new ProxyCursorIds(settings.instanceId()));
        // the tiered layer gets its way to each tier at construction, over the same forwarder as every other command
        Forwarding forwarding = Forwarding.over(backends, cursors, metrics);
        this.tiered = layer == null
                ? null
                : layer.reaching(
                        TierWiring.gateways(forwarding.forwarder(), backends),
                        forwarding.replies(),
                        forwarding.errors(),
                        metrics.registry());
        if (tiered != null) {
            TierWiring.probeArchiveServing(tiered.table(), backends.archive(), settings.stallConfirmed());
        }
        this.fleet = settings.fleet() == null ? null : fleet(settings);
        Handshake handshake = new Handshake(settings.compressors(), Handshake.serviceIdFor(settings.instanceId()));
        this.hello =
                new Hello(handshake, backends, settings.maxMessageSizeBytes(), this::isDraining, metrics, security);
        this.dispatcher = new CommandDispatcher(
                this, forwarding, hello, cursors, tiered, metrics, fleet == null ? CursorPeers.NONE : fleet);
        metrics.inFlightFrom(inFlight::get);
    }

    /** The peer link and budget division; the link has its own connector, since peers speak plain TCP inside the cluster. */
    private Fleet fleet(ProxySettings settings) {
        BackendConnector peers =
                new BackendConnector(group, transport.socketChannel(), 48_000_000, settings.connectTimeout());
        Fleet f = new Fleet(
                settings.instanceId(),
                settings.fleet(),
                ClusterSecret.read(settings.fleet().secretFile()),
                group,
                transport.serverChannel(),
                peers,
                settings.heartbeatInterval(),
                settings.poolWaitTimeout());
        f.divide(backends.archive(), settings.archive().budget());
        if (backends.fast() != null) {
            f.divide(backends.fast(), settings.fast().budget());
        }
        return f;
    }

    /** This replica's place in the fleet, or empty without peers. */
    public Optional<Fleet> fleet() {
        return Optional.ofNullable(fleet);
    }

    public ProxyServer start() throws IOException, InterruptedException {
        TierWiring.warnTierTls(settings, security);
        backends.start();
        if (fleet != null) {
            try {
                fleet.start(dispatcher::fromPeer);
            } catch (IOException e) {
                throw new CannotListen(
                        "fleet peers",
                        settings.fleet().listenHost(),
                        settings.fleet().peerPort(),
                        e);
            }
        }
        // a port opened early answered "starting" until now; otherwise it opens serving
        clientPort.serve(pipeline -> installClientPipeline(pipeline, dispatcher));
        if (!clientPort.bound()) {
            clientPort.listen(settings.listenHost(), settings.port());
        }
        serverChannel = clientPort.channel();
        // Members time idle cursors out after 10 minutes by default; the proxy forgets them after 30.
        group.scheduleAtFixedRate(
                () -> dispatcher.sweepIdleCursors(CursorRegistry.IDLE_TIMEOUT), 1, 1, TimeUnit.MINUTES);
        if (settings.httpPort() >= 0) {
            try {
                http = new HttpEndpoint(
                        settings.httpHost(), settings.httpPort(), metrics, () -> Readiness.YES, this::readiness);
            } catch (IOException e) {
                throw new CannotListen("HTTP: /metrics and /health", settings.httpHost(), settings.httpPort(), e);
            }
        }
        long heap = Runtime.getRuntime().maxMemory();
        if (settings.messageMemory().process() > heap / 2) {
            LOG.warn(
                    "event=message_memory_over_heap max_buffered_bytes={} max_heap_bytes={} action=\"client messages may hold more than"
                            + " half the heap: lower proxy.maxBufferedBytes or raise the heap (-Xmx, -XX:MaxRAMPercentage)\"",
                    settings.messageMemory().process(),
                    heap);
        }
        LOG.info(
                "event=proxy_started transport={} listen={} http={} archive={} fast={} instance={} security=\"{}\"",
                transport.name(),
                address(),
                http == null ? "off" : settings.httpHost() + ":" + http.port(),
                settings.archive().uri().getHosts(),
                settings.fast() == null ? "none" : settings.fast().uri().getHosts(),
                settings.instanceId(),
                security);
        return this;
    }

    /**
     * A client connection's handlers: TLS when {@code tls.*} asks for it (issue 15; it must come
     * before the framing), framing (the frame decoder also decodes and validates each message),
     * encoding, and the connection that turns messages into requests for {@code requests}.
     */
    void installClientPipeline(ChannelPipeline pipeline, RequestHandler requests) {
        security.tls().install(pipeline);
        ClientConnection client = new ClientConnection(connectionIds.incrementAndGet(), this, requests, hello);
        // before a login (auth required), a message and what it inflates to stay small: see
        // ClientConnection.messageSizeLimit; what messages hold, framed and inflated, until answered is reserved from
        // the
        // connection's and the process's budgets
        WireFrameDecoder frames = new WireFrameDecoder(client::messageSizeLimit, client.memory(messageMemory));
        client.framedBy(frames);
        pipeline.addLast("frames", frames);
        pipeline.addLast("encoder", new WireEncoder());
        pipeline.addLast("client", client);
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    public int port() {
        return address().getPort();
    }

    public int httpPort() {
        return http == null ? -1 : http.port();
    }

    public ProxyMetrics metrics() {
        return metrics;
    }

    /** The tiered routing, or empty for a pass-through proxy. */
    public Optional<TieredRouting> tieredRouting() {
        return Optional.ofNullable(tiered);
    }

    /** What client messages hold now, framed and inflated, of the process's budget ({@code proxy.maxBufferedBytes}). */
    public MessageMemory messageMemory() {
        return messageMemory;
    }

    ProxySecurity security() {
        return security;
    }

    ProxySettings settings() {
        return settings;
    }

    public TierTopology topology(Tier tier) {
        return backends.tier(tier).monitor().topology();
    }

    boolean isDraining() {
        return draining;
    }

    public int inFlight() {
        return inFlight.get();
    }

    void requestStarted() {
        inFlight.incrementAndGet();
    }

    void requestFinished() {
        inFlight.decrementAndGet();
    }

    /** Counts a new client; false when it is past the limit (it then gets one error and is closed). */
    boolean clientOpened(ClientConnection client) {
        clients.add(client.channel());
        if (acceptedClients.incrementAndGet() > settings.maxClientConnections()) {
            acceptedClients.decrementAndGet();
            metrics.clientRejected();
            LOG.warn(
                    "event=client_rejected remote={} limit={}",
                    client.channel().remoteAddress(),
                    settings.maxClientConnections());
            client.channel().eventLoop().schedule(() -> client.channel().close(), 10, TimeUnit.SECONDS);
            return false;
        }
        metrics.clientConnected();
        return true;
    }

    void clientClosed(ClientConnection client, boolean rejected) {
        if (!rejected) {
            acceptedClients.decrementAndGet();
            metrics.clientDisconnected();
        }
        dispatcher.connectionClosed(client.id());
    }

    /** Storage checks whose refusals make this proxy refuse writes and report not ready ({@link WriteRefusals}). */
    public WriteRefusals writeRefusals() {
        return writeRefusals;
    }

    /** How long the archive has been out of service for requests that need it (unreachable, or stalling its reads). */
    public java.util.Optional<java.time.Duration> archiveOutOfServiceFor() {
        return backends.archive().outOfServiceFor();
    }

    /** How many of the archive's serving-probe reads were answered only after a stall was confirmed. */
    public long archiveLateProbeAnswers() {
        return backends.archive().lateProbeAnswers();
    }

    /** How many clients' awaitable hellos (streaming monitors) wait for this proxy's topology to change now. */
    public int awaitableHellosWaiting() {
        return hello.waiting();
    }

    public Readiness readiness() {
        return ProxyReadiness.of(draining, writeRefusals, backends, tiered != null);
    }

    /**
     * Graceful shutdown: stop accepting, answer new requests with ShutdownInProgress (drivers
     * retry elsewhere), wait up to the drain timeout for requests in flight, then close.
     */
    @Override
    public void close() {
        draining = true;
        CompletableFuture<Void> told = hello.quiesce();
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        long deadline = System.nanoTime() + settings.drainTimeout().toNanos();
        while ((inFlight.get() > 0 || !told.isDone()) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int abandoned = inFlight.get();
        clients.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        // the connections to the tiers go before the fleet hears this replica leave: the peers then take its share of
        // the tiers' connection budget, and with these still open the fleet held more than the budget for a moment
        // (FleetBudgetTest: 3 + 3 + 2 of 6 while a replica stopped)
        backends.close();
        if (fleet != null) {
            fleet.close(); // after the drain: peers forwarded getMores here until the end
        }
        if (http != null) {
            http.close();
        }
        if (tiered != null) {
            tiered.close();
        }
        security.close();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        LOG.info("event=proxy_stopped abandoned_requests={}", abandoned);
    }
}
