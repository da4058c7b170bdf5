package io.thermocline.proxy.gateway;

import com.mongodb.ConnectionString;
import com.mongodb.ServerAddress;
import io.netty.channel.EventLoopGroup;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.pool.MemberPool;
import io.thermocline.proxy.pool.TierLogin;
import io.thermocline.proxy.session.ClusterClock;
import io.thermocline.proxy.topology.MemberDescription;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierMonitor;
import io.thermocline.wire.Compressor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;

/** One tier as the proxy uses it: its topology monitor, a pool per member, its cluster clock. */
public final class TierBackend implements TierMonitor.Listener, AutoCloseable {
    private final Tier tier;
    private final TierMonitor monitor;
    private final ClusterClock clock = new ClusterClock();
    private final Map<ServerAddress, MemberPool> pools = new ConcurrentHashMap<>();
    private volatile int poolSize;
    private final BackendConnector connector;
    private final EventLoopGroup group;
    private final Duration poolWait;
    private final ProxyMetrics metrics;
    private final List<Compressor> compressors;
    /** The data plane's own login to this tier, from the credentials in its connection string (issue 15). */
    private final TierLogin login;

    private final AtomicLong lastLoginProbe = new AtomicLong();
    private volatile boolean closed;
    /** Asks the primary a read now and then to tell a stalled tier from a serving one; none until {@link #probeServing}. */
    private volatile io.thermocline.proxy.topology.ServingProbe serving;

    public TierBackend(
            Tier tier,
            ConnectionString uri,
            int poolSize,
            BackendConnector connector,
            EventLoopGroup group,
            Duration heartbeat,
            Duration poolWait,
            ProxyMetrics metrics,
            List<Compressor> compressors) {
        this.tier = tier;
        this.compressors = compressors;
        this.poolSize = poolSize;
        this.connector = connector;
        this.group = group;
        this.poolWait = poolWait;
        this.metrics = metrics;
        this.login = TierLogin.of(uri.getCredential(), "tiers." + tier.label() + ".uri");
        this.monitor = new TierMonitor(
                tier,
                uri,
                connector,
                group,
                heartbeat,
                TierMonitor.defaultOptimeInterval(heartbeat),
                c -> login.login(c, connector.connectTimeout()),
                this);
        metrics.primaryKnown(tier, false);
    }

    public void start() {
        monitor.start();
    }

    public Tier tier() {
        return tier;
    }

    /** The data plane's login to this tier, whose last refusal (wrong credentials) makes the proxy not ready. */
    public TierLogin login() {
        return login;
    }

    /**
     * Logs in once on a connection of its own to the primary, at most every {@code every}, while no login has
     * succeeded since the last refusal: readiness then learns of wrong credentials (or of fixed ones) without client traffic.
     */
    public void probeLogin(Duration every) {
        ServerAddress primary = monitor.topology().primary();
        long now = System.nanoTime();
        long last = lastLoginProbe.get();
        if (!login.needed()
                || login.succeeded()
                || primary == null
                || (last != 0 && now - last < every.toNanos())
                || !lastLoginProbe.compareAndSet(last, now)) {
            return;
        }
        connector
                .connect(primary, 0)
                .thenCompose(c -> login.login(c, connector.connectTimeout()).whenComplete((v, e) -> c.close()));
    }

    public TierMonitor monitor() {
        return monitor;
    }

    /**
     * From now on asks the primary {@code read} every {@code every}, the tier stalled once one is unanswered for {@code
     * stallConfirmed} ({@link io.thermocline.proxy.topology.ServingProbe}).
     */
    public synchronized void probeServing(BsonDocument read, Duration every, Duration stallConfirmed) {
        if (serving == null && !closed) {
            serving = new io.thermocline.proxy.topology.ServingProbe(
                            monitor,
                            connector,
                            group,
                            c -> login.login(c, connector.connectTimeout()),
                            read,
                            every,
                            stallConfirmed)
                    .start();
        }
    }

    /**
     * How long this tier has been out of service for requests that need it: no member answering ({@link
     * TierMonitor#unreachableFor}) or a primary that answers hello but leaves a read unanswered (once probed).
     */
    public java.util.Optional<Duration> outOfServiceFor() {
        java.util.Optional<Duration> down = monitor.unreachableFor();
        io.thermocline.proxy.topology.ServingProbe probe = serving;
        java.util.Optional<Duration> stalled = probe == null ? java.util.Optional.empty() : probe.stalledFor();
        if (down.isEmpty()) {
            return stalled;
        }
        return stalled.isPresent() && stalled.get().compareTo(down.get()) > 0 ? stalled : down;
    }

    /** How many of the serving probe's reads this tier answered only after a stall was confirmed (0: not probed). */
    public long lateProbeAnswers() {
        io.thermocline.proxy.topology.ServingProbe probe = serving;
        return probe == null ? 0 : probe.lateAnswers();
    }

    public ClusterClock clock() {
        return clock;
    }

    public MemberPool pool(ServerAddress member) {
        MemberPool pool = pools.computeIfAbsent(member, m -> {
            MemberPool p = new MemberPool(
                    tier, m, Math.max(1, poolSize), poolWait, connector, group.next(), metrics, compressors, login);
            if (closed) {
                p.close();
            }
            return p;
        });
        int share = poolSize;
        if (pool.limit() != share) {
            pool.resize(share); // created while the fleet re-divided the budget
        }
        return pool;
    }

    /** This replica's share per member now: every pool, and pools opened later, keep to it. */
    public void resize(int perMember) {
        poolSize = perMember;
        pools.values().forEach(p -> p.resize(perMember));
    }

    /**
     * What this replica may hold on any one member of the tier: its limit, or more while a shrink is
     * still closing busy connections. Peers grow only into what the others do not hold.
     */
    public int held() {
        int held = poolSize;
        for (MemberPool p : pools.values()) {
            held = Math.max(held, Math.max(p.limit(), p.open()));
        }
        return held;
    }

    /** Requests in flight to {@code member} from this proxy: borrowed connections plus requests waiting for one. */
    public int inFlight(ServerAddress member) {
        MemberPool p = pools.get(member);
        return p == null ? 0 : p.inUse() + p.waiters();
    }

    @Override
    public void memberChanged(Tier t, MemberDescription before, MemberDescription after) {
        metrics.primaryKnown(tier, monitor.topology().primary() != null);
        boolean wasPrimary = before != null && before.role() == MemberRole.PRIMARY;
        boolean lost = !after.role().dataBearing() || (wasPrimary && after.role() != MemberRole.PRIMARY);
        MemberPool pool = pools.get(after.address());
        if (lost && pool != null) {
            // Connections to a member that went away or stepped down may be half-dead or hold
            // state for the old role; new requests get fresh connections.
            pool.clear();
        }
    }

    @Override
    public void clusterTimeSeen(Tier t, BsonDocument clusterTime) {
        clock.advance(clusterTime);
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (serving != null) {
            serving.close();
        }
        monitor.close();
        pools.values().forEach(MemberPool::close);
    }
}
