package io.thermocline.proxy.server;

import com.mongodb.MongoCompressor;
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
import io.thermocline.proxy.gateway.TierBackend;
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
import io.thermocline.wire.Compressor;
import io.thermocline.wire.WireEncoder;
import io.thermocline.wire.WireFrameDecoder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.types.ObjectId;
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
    /** How often the archive's primary is asked a read to tell a stalled archive from a serving one. */
    static final java.time.Duration SERVING_PROBE_INTERVAL = java.time.Duration.ofMillis(500);

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
     * A tiering proxy: {@code tiered} routes commands on tiered namespaces (see
     * {@link TieredProxy}); null makes a pass-through proxy. The server closes it.
     */
    public ProxyServer(ProxySettings settings, TieredRouting tiered) {
        this(settings, tiered, ProxySecurity.disabled());
    }

    /** With client authentication and authorization ({@code auth.*}, see docs/security.md); the server closes {@code security}. */
    public ProxyServer(ProxySettings settings, TieredRouting tiered, ProxySecurity security) {
        this(settings, tiered, security, null);
    }

    /**
     * Serving clients on {@code port} when it is not null (opened earlier by {@link ClientPort#bind}, with the same
     * {@code proxy.transport}); the proxy owns it from then on. Connections it accepted while starting are plain
     * TCP even when {@code tls.*} asks for TLS: TLS clients fail their handshake then, which drivers retry.
     */
    private ProxyServer(ProxySettings settings, TieredRouting tiered, ProxySecurity security, ClientPort port) {
        this.settings = settings;
        this.security = security;
        this.messageMemory = new MessageMemory(settings.messageMemory());
        metrics.messageMemoryFrom(messageMemory::held, messageMemory::refused);
        metrics.alsoExpose(security.metrics().registry());
        this.tiered = tiered;
        // one set of event loops for the client port and the backends: a request never crosses threads
        this.clientPort = port != null ? port : new ClientPort(NettyTransport.choose(settings.transport()));
        this.transport = clientPort.transport();
        if (tiered != null) {
            tiered.countIn(metrics.registry());
        }
        this.group = clientPort.group();
        // Replies from a member can be as large as the member allows, whatever the client-side limit.
        // Each tier's own connector: TLS as tls.tierCaFile or its URI asks (a URI with tls=true is never reached in
        // plain text).
        this.backends = new Backends(
                tierBackend(Tier.ARCHIVE, settings.archive(), connector(settings, settings.archive())),
                settings.fast() == null
                        ? null
                        : tierBackend(Tier.FAST, settings.fast(), connector(settings, settings.fast())),
                settings.primaryWaitTimeout());
        if (tiered != null) {
            tiered.followArchive(backends.archive().monitor()::topology);
            tiered.readBarrierFailsFastWhileArchiveDown(backends.archive()::outOfServiceFor);
            // a point count that finds nothing, on a tiered collection the data plane reads anyway: a stalled archive
            // (hello answered, commands not) then refuses archive-routed reads fast instead of holding each one
            tiered.table().policies().values().stream()
                    .findFirst()
                    .ifPresent(p -> backends.archive()
                            .probeServing(
                                    io.thermocline.proxy.topology.ServingProbe.pointCount(p.database(), p.collection()),
                                    SERVING_PROBE_INTERVAL));
        }
        CursorRegistry cursors = new CursorRegistry(new ProxyCursorIds(settings.instanceId()));
        this.fleet = settings.fleet() == null ? null : fleet(settings);
        Handshake handshake = new Handshake(settings.compressors(), serviceIdFor(settings.instanceId()));
        this.hello =
                new Hello(handshake, backends, settings.maxMessageSizeBytes(), this::isDraining, metrics, security);
        this.dispatcher = new CommandDispatcher(
                this, backends, hello, cursors, tiered, metrics, fleet == null ? CursorPeers.NONE : fleet);
        metrics.inFlightFrom(inFlight::get);
    }

    /**
     * Compression towards a tier is asked for the way any driver asks: {@code compressors=} in
     * the tier's connection string. Off by default, since the proxy usually sits next to its backends.
     */
    private static List<Compressor> backendCompressors(ProxySettings.TierEndpoint endpoint) {
        List<Compressor> out = new ArrayList<>();
        for (MongoCompressor c : endpoint.uri().getCompressorList()) {
            Compressor.byName(c.getName()).filter(x -> x != Compressor.NOOP).ifPresent(out::add);
        }
        return out;
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

    private TierBackend tierBackend(Tier tier, ProxySettings.TierEndpoint endpoint, BackendConnector connector) {
        return new TierBackend(
                tier,
                endpoint.uri(),
                endpoint.poolSize(),
                connector,
                group,
                settings.heartbeatInterval(),
                settings.poolWaitTimeout(),
                metrics,
                backendCompressors(endpoint));
    }

    /** A stable serviceId per instance id, so load-balanced drivers can tell fleet members apart. */
    private static ObjectId serviceIdFor(String instanceId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(instanceId.getBytes(StandardCharsets.UTF_8));
            return new ObjectId(Arrays.copyOf(digest, 12));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }

    public ProxyServer start() throws IOException, InterruptedException {
        warnUnsupported("tiers.archive.uri", settings.archive());
        if (settings.fast() != null) {
            warnUnsupported("tiers.fast.uri", settings.fast());
        }
        backends.start();
        if (fleet != null) {
            fleet.start(dispatcher::fromPeer);
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

    private BackendConnector connector(ProxySettings settings, ProxySettings.TierEndpoint endpoint) {
        return new BackendConnector(
                group,
                transport.socketChannel(),
                Math.max(settings.maxMessageSizeBytes(), 48_000_000),
                settings.connectTimeout(),
                security.tierTls().forTier(endpoint.uri()));
    }

    /** A tier URI asking for TLS without tls.tierCaFile is reached over TLS trusting the system store: say so at start. */
    private void warnUnsupported(String field, ProxySettings.TierEndpoint endpoint) {
        if (Boolean.TRUE.equals(endpoint.uri().getSslEnabled())
                && !security.tierTls().enabled()) {
            LOG.info(
                    "event=tier_tls field={} trust=system problem=\"tls=true without tls.tierCaFile: TLS trusting the JDK's system"
                            + " trust store; set tls.tierCaFile to trust only the tiers' CA\"",
                    field);
        }
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

    /** How many clients' awaitable hellos (streaming monitors) wait for this proxy's topology to change now. */
    /** How long the archive has been out of service for requests that need it (unreachable, or stalling its reads). */
    public java.util.Optional<java.time.Duration> archiveOutOfServiceFor() {
        return backends.archive().outOfServiceFor();
    }

    public int awaitableHellosWaiting() {
        return hello.waiting();
    }

    public Readiness readiness() {
        if (draining) {
            return new Readiness(false, "shutting down");
        }
        Optional<String> refusing = writeRefusals.current();
        if (refusing.isPresent()) {
            return new Readiness(false, "writes refused: " + refusing.get());
        }
        if (backends.archive().monitor().topology().primary() == null) {
            if (tiered != null
                    && backends.fast() != null
                    && backends.fast().monitor().topology().primary() != null) {
                // taking every replica out of service would stop the hot data too: stay ready, and say it
                // (docs/faults.md)
                return new Readiness(
                        true,
                        "degraded: no primary known for the archive tier; serving what the fast tier proves, "
                                + "refusing the rest retryably");
            }
            // the members' errors are the cause a person acts on (a rejected certificate, a refused connection);
            // the operator carries this text into its ProxyReady condition
            return new Readiness(
                    false,
                    "no primary known for the archive tier ("
                            + backends.archive().monitor().describeProblems() + ")");
        }
        String degraded = "";
        if (backends.fast() != null && backends.fast().monitor().topology().primary() == null) {
            String problems = "no primary known for the fast tier ("
                    + backends.fast().monitor().describeProblems() + ")";
            if (!backends.fast().monitor().primarySeen()) {
                return new Readiness(false, problems);
            }
            // an election, or a fast tier down after it served: every replica sees it at once, and taking them all out
            // would empty the Service and refuse every connection (issue 42 item 3). The archive still answers what
            // needs no fast tier; the rest gets retryable errors, which drivers ride out across an election
            degraded = "degraded: " + problems + "; commands that need it get retryable errors until it has one";
        }
        // wrong credentials in a tier URI: every client login (archive users) and every pooled connection fails, so
        // not ready
        for (TierBackend tier :
                backends.fast() == null ? List.of(backends.archive()) : List.of(backends.archive(), backends.fast())) {
            tier.probeLogin(Duration.ofSeconds(2));
            Optional<String> refused = tier.login().refusal();
            if (refused.isPresent()) {
                return new Readiness(
                        false, "the " + tier.tier().label() + " tier refused the proxy's login: " + refused.get());
            }
            if (!tier.login().succeeded()) {
                return new Readiness(
                        false,
                        "the proxy has not logged in to the " + tier.tier().label() + " tier yet");
            }
        }
        return new Readiness(true, degraded);
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
        if (fleet != null) {
            fleet.close(); // after the drain: peers forwarded getMores here until the end
        }
        backends.close();
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
