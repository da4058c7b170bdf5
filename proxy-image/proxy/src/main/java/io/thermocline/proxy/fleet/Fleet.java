package io.thermocline.proxy.fleet;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.ScheduledFuture;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.proxy.cursor.ProxyCursorIds;
import io.thermocline.proxy.gateway.TierBackend;
import io.thermocline.proxy.server.cursors.CursorPeers;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.security.UserName;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.WireEncoder;
import io.thermocline.wire.WireFrameDecoder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This replica's view of the fleet: it listens for its peers on the peer port, pings every peer address
 * each heartbeat (the answer says who is there, which replicas it sees, and how many connections per
 * member it holds on each tier), divides each tier's connection budget among the live replicas
 * ({@link ConnectionBudget}), and sends a cursor command to the replica whose id the cursor carries.
 */
public final class Fleet implements CursorPeers, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Fleet.class);

    /** What one peer said in its last answer. */
    record PeerStatus(
            String instanceId,
            InetSocketAddress address,
            List<String> view,
            Map<String, Integer> held,
            long seenNanos) {}

    /** One tier whose budget the fleet divides, and this replica's limit on it now. */
    private static final class Share {
        final TierBackend tier;
        final int budget;
        volatile int limit;

        Share(TierBackend tier, int budget) {
            this.tier = tier;
            this.budget = budget;
        }
    }

    private final String instanceId;
    private final FleetSettings settings;
    private final ClusterSecret secret;
    private final EventLoopGroup group;
    private final Class<? extends ServerChannel> serverChannel;
    /** Heartbeats on links of their own, so forwarded cursor commands holding every connection never look like a dead peer. */
    private final PeerLinks heartbeats;

    private final PeerLinks links;
    private final Duration heartbeat;
    private final Duration pingTimeout;
    private final long liveForNanos;
    private final List<Share> shares = new ArrayList<>();
    private final Map<InetSocketAddress, PeerStatus> peers = new ConcurrentHashMap<>();
    private final Set<InetSocketAddress> ownAddresses = ConcurrentHashMap.newKeySet();
    private volatile List<String> view;
    private volatile PeerRequests requests =
            (r, hops) -> CompletableFuture.failedFuture(new IllegalStateException("not serving yet"));
    private Channel listener;
    private ScheduledFuture<?> beat;

    /** {@code peerWait}: how long a forwarded cursor command waits for one of the {@code fleet.peerConnections} to a peer. */
    public Fleet(
            String instanceId,
            FleetSettings settings,
            ClusterSecret secret,
            EventLoopGroup group,
            Class<? extends ServerChannel> serverChannel,
            BackendConnector connector,
            Duration heartbeat,
            Duration peerWait) {
        this.instanceId = instanceId;
        this.settings = settings;
        this.secret = secret;
        this.group = group;
        this.serverChannel = serverChannel;
        this.heartbeat = heartbeat;
        this.pingTimeout = heartbeat.multipliedBy(2).compareTo(Duration.ofSeconds(1)) < 0
                ? Duration.ofSeconds(1)
                : heartbeat.multipliedBy(2);
        this.liveForNanos = heartbeat.multipliedBy(3).plus(pingTimeout).toNanos();
        this.heartbeats = new PeerLinks(connector, secret, instanceId, pingTimeout, 1, pingTimeout, group.next());
        this.links = new PeerLinks(
                connector, secret, instanceId, pingTimeout, settings.peerConnections(), peerWait, group.next());
        this.view = List.of(instanceId);
    }

    /** A tier whose per-member budget the live replicas share; its pools start at no connection until the first heartbeat. */
    public void divide(TierBackend tier, int budget) {
        Share s = new Share(tier, budget);
        s.limit = 0;
        tier.resize(0);
        shares.add(s);
    }

    /**
     * Binds the peer port, learns who is there (one heartbeat, bounded) and takes this replica's shares; then keeps
     * beating. A peer port that cannot be bound fails with the transport's IOException (the server names the port).
     */
    public void start(PeerRequests requests) throws InterruptedException, java.io.IOException {
        this.requests = requests;
        listener = bindPeerPort();
        try {
            beatOnce().get(pingTimeout.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.warn("event=fleet_first_heartbeat_incomplete error=\"{}\"", e.toString());
        }
        beat = group.next()
                .scheduleWithFixedDelay(
                        () -> beatOnce(), heartbeat.toMillis(), heartbeat.toMillis(), TimeUnit.MILLISECONDS);
        LOG.info("event=fleet_started instance={} peer_port={} live={}", instanceId, peerPort(), view);
    }

    private Channel bindPeerPort() throws InterruptedException, java.io.IOException {
        return new ServerBootstrap()
                .group(group)
                .channel(serverChannel)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("frames", new WireFrameDecoder(48_000_000));
                        ch.pipeline().addLast("encoder", new WireEncoder());
                        ch.pipeline()
                                .addLast(
                                        "peer",
                                        new PeerConnection(
                                                secret, instanceId, Fleet.this.requests, Fleet.this::answerPing));
                    }
                })
                .bind(settings.listenHost(), settings.peerPort())
                .sync()
                .channel();
    }

    public int peerPort() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** The live replicas as this one sees them, sorted, itself included. */
    public List<String> live() {
        return view;
    }

    /** This replica's limit per member on {@code tier} now. */
    public int limit(Tier tier) {
        return shares.stream()
                .filter(s -> s.tier.tier() == tier)
                .findFirst()
                .map(s -> s.limit)
                .orElse(-1);
    }

    private CompletableFuture<Void> beatOnce() {
        List<InetSocketAddress> addresses;
        try {
            addresses = settings.peers().resolve();
        } catch (RuntimeException e) {
            LOG.warn("event=fleet_peers_unresolved error=\"{}\"", e.toString());
            addresses = List.of();
        }
        BsonDocument ping = status(PeerProtocol.command(PeerProtocol.PING));
        List<CompletableFuture<Void>> pings = new ArrayList<>();
        for (InetSocketAddress a : addresses) {
            if (ownAddresses.contains(a)) {
                continue;
            }
            pings.add(heartbeats.call(a, ping, pingTimeout).handle((body, e) -> {
                if (e != null || !OpMsg.isOk(body)) {
                    if (peers.remove(a) != null) {
                        LOG.info(
                                "event=fleet_peer_lost address={} error=\"{}\"",
                                a,
                                e == null ? body.get("errmsg") : e.getMessage());
                    }
                    return null;
                }
                PeerStatus s = parse(body, a);
                if (s.instanceId().equals(instanceId)) {
                    ownAddresses.add(a);
                } else if (peers.put(a, s) == null) {
                    LOG.info("event=fleet_peer_seen address={} instance={}", a, s.instanceId());
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(pings.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> rebalance());
    }

    /** Re-divides every tier's budget by the live replicas: shrink at once, grow only into what is free. */
    private synchronized void rebalance() {
        long now = System.nanoTime();
        peers.values().removeIf(p -> now - p.seenNanos() > liveForNanos);
        Map<String, PeerStatus> live = new TreeMap<>();
        peers.values().forEach(p -> live.merge(p.instanceId(), p, (x, y) -> x.seenNanos() >= y.seenNanos() ? x : y));
        List<String> ids = new ArrayList<>(live.keySet());
        ids.add(instanceId);
        ids.sort(null);
        List<String> before = view;
        view = List.copyOf(ids);
        boolean agreed = live.values().stream().allMatch(p -> p.view().equals(view));
        for (Share s : shares) {
            int share = ConnectionBudget.share(s.budget, view, instanceId);
            int others = othersHeld(live.values(), s.tier.tier().label());
            int next = ConnectionBudget.next(s.budget, s.limit, share, others, agreed);
            if (next != s.limit) {
                LOG.info(
                        "event=fleet_budget tier={} live={} share={} others_hold={} limit_before={} limit={}",
                        s.tier.tier().label(),
                        view.size(),
                        share,
                        others,
                        s.limit,
                        next);
                s.limit = next;
                s.tier.resize(next);
            }
        }
        if (!before.equals(view)) {
            LOG.info("event=fleet_view instance={} live={}", instanceId, view);
        }
    }

    private static int othersHeld(Collection<PeerStatus> live, String tier) {
        return live.stream().mapToInt(p -> p.held().getOrDefault(tier, 0)).sum();
    }

    /** A peer's ping gets this replica's own status. */
    private BsonDocument answerPing(BsonDocument ping) {
        return status(new BsonDocument("ok", new BsonDouble(1)));
    }

    private BsonDocument status(BsonDocument doc) {
        BsonArray ids = new BsonArray();
        view.forEach(id -> ids.add(new BsonString(id)));
        BsonDocument held = new BsonDocument();
        for (Share s : shares) {
            held.append(s.tier.tier().label(), new BsonInt32(Math.max(s.limit, s.tier.held())));
        }
        return doc.append("instanceId", new BsonString(instanceId))
                .append("view", ids)
                .append("held", held);
    }

    private static PeerStatus parse(BsonDocument body, InetSocketAddress address) {
        List<String> view = new ArrayList<>();
        BsonValue v = body.get("view");
        if (v != null && v.isArray()) {
            v.asArray().forEach(x -> view.add(x.asString().getValue()));
        }
        Map<String, Integer> held = new TreeMap<>();
        BsonValue h = body.get("held");
        if (h != null && h.isDocument()) {
            h.asDocument().forEach((tier, n) -> held.put(tier, n.asNumber().intValue()));
        }
        return new PeerStatus(
                body.getString("instanceId").getValue(), address, List.copyOf(view), held, System.nanoTime());
    }

    @Override
    public Owner ownerOf(long cursorId) {
        int tag = ProxyCursorIds.ownerOf(cursorId);
        long now = System.nanoTime();
        for (PeerStatus p : peers.values()) {
            if (ProxyCursorIds.instanceBitsOf(p.instanceId()) == tag && now - p.seenNanos() <= liveForNanos) {
                return new Peer(p.instanceId(), p.address());
            }
        }
        return new Gone("it belongs to another proxy replica (owner tag " + tag
                + "), which is not among the live replicas " + view
                + ": that replica stopped or restarted, and its cursors ended with it; run the query again");
    }

    @Override
    public CompletableFuture<RawBsonDocument> call(
            Peer owner, RawBsonDocument command, int hops, ConnectionAuth caller) {
        BsonDocument who = new BsonDocument("enforced", BsonBoolean.valueOf(caller.enforced()));
        UserName user = caller.userName();
        if (user != null) {
            who.append("user", new BsonString(user.user())).append("db", new BsonString(user.db()));
        }
        RawBsonDocument counted = CommandEnvelope.edit(
                command,
                Map.of(),
                Set.of(HOPS_FIELD, CALLER_FIELD),
                new BsonDocument(HOPS_FIELD, new BsonInt32(hops)).append(CALLER_FIELD, who));
        return links.call(owner.address(), counted, null);
    }

    @Override
    public void close() {
        if (beat != null) {
            beat.cancel(false);
        }
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        heartbeats.close();
        links.close();
    }

    /** The connections this replica holds open to {@code peer} for cursor commands (heartbeats not counted). */
    public int peerConnections(InetSocketAddress peer) {
        return links.open(peer);
    }
}
