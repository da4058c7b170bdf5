package io.thermocline.proxy.topology;

import com.mongodb.ConnectionString;
import com.mongodb.ServerAddress;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.backend.BackendUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Watches one tier's replica set: polls {@code hello} on every member over the monitor's own
 * connections, discovers members from the primary's host list, and follows elections. Pools
 * are told when a member goes away or stops being primary so they drop their connections.
 *
 * <p>Between heartbeats it asks the primary for {@code replSetGetStatus} every {@code optimeInterval}
 * (where the tier's user may: clusterMonitor), which gives every member's applied optime in one round
 * trip. Streaming (awaitable) hello would not do this: a member answers it when its topologyVersion
 * changes (elections, state changes), never because it applied a write, so optimes would refresh only
 * every maxAwaitTimeMS.
 *
 * <p>This class holds the tier's state (the descriptions, the topology, the waiters for a primary); each member's
 * heartbeat is a {@link MemberMonitor}, the optime poll an {@link OptimePoll}.
 */
public final class TierMonitor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TierMonitor.class);

    /** A member the proxy cannot reach (refused, timed out, wrong set) is worth a WARN; every other change is INFO. */
    static Level changeLevel(MemberDescription after) {
        return after.error() != null ? Level.WARN : Level.INFO;
    }

    /** Told about every change of a member's description and every cluster time seen in hello. */
    public interface Listener {
        void memberChanged(Tier tier, MemberDescription before, MemberDescription after);

        void clusterTimeSeen(Tier tier, BsonDocument clusterTime);
    }

    private final Tier tier;
    private final String requiredSetName;
    private final boolean direct;
    private final BackendConnector connector;
    private final EventLoopGroup group;
    private final Duration heartbeat;
    private final Listener listener;
    private final OptimePoll optimes;

    private final Map<ServerAddress, MemberMonitor> monitors = new LinkedHashMap<>();
    private final Map<ServerAddress, MemberDescription> descriptions = new LinkedHashMap<>();
    private final List<CompletableFuture<ServerAddress>> primaryWaiters = new ArrayList<>();
    private volatile TierTopology topology;
    /** Set once a primary was known; never cleared (see primarySeen). */
    private volatile boolean primarySeen;

    private volatile boolean closed;
    /** {@link System#nanoTime} since when no member of the tier has answered a check (0 while one answers). */
    private volatile long unreachableSince;

    /** After this long with no member answering, the tier is down: requests stop waiting the full selection timeout. */
    public static final Duration OUTAGE_CONFIRMED = Duration.ofSeconds(2);

    /**
     * {@code optimeInterval}: how often the primary is asked for every member's optime ({@code replSetGetStatus});
     * {@code login}: the tier's login on the monitor's connection for it (hello needs none, replSetGetStatus does).
     */
    public TierMonitor(
            Tier tier,
            ConnectionString uri,
            BackendConnector connector,
            EventLoopGroup group,
            Duration heartbeat,
            Duration optimeInterval,
            Function<BackendConnection, CompletableFuture<Void>> login,
            Listener listener) {
        this.tier = tier;
        this.requiredSetName = uri.getRequiredReplicaSetName();
        this.direct = Boolean.TRUE.equals(uri.isDirectConnection());
        this.connector = connector;
        this.group = group;
        this.heartbeat = heartbeat;
        this.listener = listener;
        for (String host : uri.getHosts()) {
            ServerAddress a = new ServerAddress(host);
            descriptions.put(a, MemberDescription.unknown(a, "not checked yet"));
        }
        this.topology = new TierTopology(tier, requiredSetName, Map.copyOf(descriptions), null);
        this.optimes = new OptimePoll(this, connector, login, group, optimeInterval);
    }

    public Tier tier() {
        return tier;
    }

    /**
     * A fifth of the heartbeat, kept within 50-100 ms: optimes fresh enough that a causal read rarely goes to the
     * primary for want of them, at no more than 20 small commands a second to the primary.
     */
    public static Duration defaultOptimeInterval(Duration heartbeat) {
        Duration fifth = heartbeat.dividedBy(5);
        if (fifth.compareTo(Duration.ofMillis(100)) > 0) {
            return Duration.ofMillis(100);
        }
        return fifth.compareTo(Duration.ofMillis(50)) < 0 ? Duration.ofMillis(50) : fifth;
    }

    public synchronized void start() {
        for (ServerAddress a : descriptions.keySet()) {
            monitors.computeIfAbsent(a, this::memberMonitor).check();
        }
        if (!direct) {
            optimes.schedule();
        }
    }

    public TierTopology topology() {
        return topology;
    }

    /** Whether this tier ever had a known primary since the monitor started: a primary missing now is an outage. */
    public boolean primarySeen() {
        return primarySeen;
    }

    /**
     * Learns from a reply of {@code member} that it has applied at least {@code optime} (a secondary's
     * {@code operationTime} is its last applied optime when the read ran): between heartbeats, the members
     * that serve reads keep a fresh applied optime, so they stay eligible for reads at recent points.
     */
    public void appliedAtLeast(ServerAddress member, BsonTimestamp optime) {
        synchronized (this) {
            MemberDescription d = descriptions.get(member);
            if (closed || d == null || d.role() != MemberRole.SECONDARY || d.applied(optime)) {
                return;
            }
            descriptions.put(member, d.withAppliedOpTime(optime));
            topology = new TierTopology(tier, requiredSetName, Map.copyOf(descriptions), topology.primary());
        }
    }

    /**
     * A request to {@code member} failed to reach it: it is unknown (so no read is sent to it) until its
     * next successful hello, which is asked for now.
     */
    public void unreachable(ServerAddress member, String error) {
        update(MemberDescription.unknown(member, error));
        requestCheck();
    }

    /** Checks every member now instead of at the next heartbeat (after a not-primary error, a failed connect). */
    public void requestCheck() {
        List<MemberMonitor> all;
        synchronized (this) {
            all = new ArrayList<>(monitors.values());
        }
        all.forEach(MemberMonitor::check);
    }

    /**
     * Completes once a primary other than {@code failed} is known, or with null after {@code timeout}.
     * A request that could not reach the primary answers only then, so the client's single retry
     * (retryable writes and reads) lands on the new primary instead of the dead one, as behind a mongos.
     */
    public CompletableFuture<ServerAddress> awaitPrimaryOtherThan(ServerAddress failed, Duration timeout) {
        return awaitChoice(t -> t.primaryAddress().filter(p -> !p.equals(failed)), timeout)
                .thenApply(p -> p.orElse(null));
    }

    /**
     * Completes with what {@code pick} finds in the topology, asked again as it changes (a check of every member is
     * requested now), or with empty after {@code timeout}: a server-selection loop for choices other than the primary.
     */
    public <T> CompletableFuture<Optional<T>> awaitChoice(Function<TierTopology, Optional<T>> pick, Duration timeout) {
        CompletableFuture<Optional<T>> f = new CompletableFuture<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        Runnable[] poll = new Runnable[1];
        poll[0] = () -> {
            Optional<T> found;
            try {
                found = pick.apply(topology);
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
                return;
            }
            if (found.isPresent() || System.nanoTime() >= deadline) {
                f.complete(found);
            } else {
                group.schedule(poll[0], 20, TimeUnit.MILLISECONDS);
            }
        };
        requestCheck();
        poll[0].run();
        return f;
    }

    /** How long no member of this tier has answered (empty while one answers): an outage. */
    public Optional<Duration> unreachableFor() {
        long since = unreachableSince;
        return since == 0 ? Optional.empty() : Optional.of(Duration.ofNanos(System.nanoTime() - since));
    }

    /** Completes with the primary as soon as one is known, or fails after {@code timeout} (less while the tier is down). */
    public CompletableFuture<ServerAddress> awaitPrimary(Duration requested) {
        ServerAddress p = topology.primary();
        if (p != null) {
            return CompletableFuture.completedFuture(p);
        }
        Optional<Duration> down = unreachableFor();
        Duration timeout = OutOfService.primaryWait(requested, down);
        String outage = timeout.equals(requested)
                ? ""
                : "the " + tier.label() + " tier is unreachable (no member has answered for "
                        + down.orElseThrow().toSeconds() + " s), so this request did not wait the full "
                        + requested.toMillis() + " ms; ";
        CompletableFuture<ServerAddress> f = new CompletableFuture<>();
        synchronized (this) {
            if (topology.primary() != null) {
                return CompletableFuture.completedFuture(topology.primary());
            }
            primaryWaiters.add(f);
        }
        requestCheck();
        ScheduledFuture<?> t = group.schedule(
                () -> {
                    synchronized (this) {
                        primaryWaiters.remove(f);
                    }
                    f.completeExceptionally(new BackendUnavailableException(
                            outage
                                    + "no primary is known for the " + tier.label() + " tier after "
                                    + timeout.toMillis() + " ms ("
                                    + describeProblems() + ")",
                            false));
                },
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
        f.whenComplete((a, e) -> t.cancel(false));
        return f;
    }

    /** Each member's address, role and last error (a refused TLS handshake, a connect timeout): why no primary is known. */
    public String describeProblems() {
        List<String> parts = new ArrayList<>();
        for (MemberDescription m : topology.members().values()) {
            parts.add(m.address() + " " + m.role().name().toLowerCase() + (m.error() != null ? ": " + m.error() : ""));
        }
        return String.join("; ", parts);
    }

    @Override
    public void close() {
        closed = true;
        List<MemberMonitor> all;
        synchronized (this) {
            all = new ArrayList<>(monitors.values());
            monitors.clear();
        }
        all.forEach(MemberMonitor::stop);
        optimes.stop();
    }

    private MemberMonitor memberMonitor(ServerAddress member) {
        return new MemberMonitor(this, member, connector, group, heartbeat);
    }

    /** Whether the monitor was closed: its member monitors and optime poll stop scheduling. */
    boolean closed() {
        return closed;
    }

    /** A cluster time a member's hello carried, for the listener. */
    void clusterTimeSeen(BsonDocument clusterTime) {
        listener.clusterTimeSeen(tier, clusterTime);
    }

    /** Takes a member's new description (from its heartbeat or a failed request) into the topology. */
    void update(MemberDescription described) {
        List<Runnable> notifications = new ArrayList<>();
        List<CompletableFuture<ServerAddress>> wake = List.of();
        ServerAddress primary;
        synchronized (this) {
            if (closed || !monitors.containsKey(described.address())) {
                return;
            }
            MemberDescription d = described;
            if (requiredSetName != null && d.setName() != null && !requiredSetName.equals(d.setName())) {
                d = MemberDescription.unknown(
                        d.address(),
                        "member belongs to replica set '" + d.setName() + "', not '" + requiredSetName + "'");
            }
            if (d.role() == MemberRole.PRIMARY) {
                for (MemberDescription other : new ArrayList<>(descriptions.values())) {
                    if (other.role() == MemberRole.PRIMARY && !other.address().equals(d.address())) {
                        if (MemberDescription.newer(other, d)) {
                            d = MemberDescription.unknown(d.address(), "reports a stale election");
                        } else {
                            MemberDescription demoted =
                                    MemberDescription.unknown(other.address(), "superseded by a newer primary");
                            descriptions.put(other.address(), demoted);
                            notifications.add(() -> listener.memberChanged(tier, other, demoted));
                        }
                    }
                }
            }
            MemberDescription before = descriptions.put(d.address(), d);
            MemberDescription after = d;
            if (!MemberDescription.sameState(before, after)) {
                notifications.add(() -> listener.memberChanged(tier, before, after));
                LOG.atLevel(changeLevel(after))
                        .log(
                                "event=member_changed tier={} member={} role={} setName={}{}",
                                tier.label(),
                                after.address(),
                                after.role().name().toLowerCase(),
                                after.setName(),
                                after.error() != null ? " error=\"" + after.error() + "\"" : "");
            }
            if (!direct
                    && (d.role() == MemberRole.PRIMARY
                            || (d.role() == MemberRole.SECONDARY && TierTopology.primaryOf(descriptions) == null))) {
                for (ServerAddress h : d.hosts()) {
                    if (!descriptions.containsKey(h)) {
                        descriptions.put(h, MemberDescription.unknown(h, "not checked yet"));
                        MemberMonitor m = memberMonitor(h);
                        monitors.put(h, m);
                        notifications.add(m::check);
                    }
                }
                if (d.role() == MemberRole.PRIMARY && !d.hosts().isEmpty()) {
                    for (ServerAddress known : new ArrayList<>(descriptions.keySet())) {
                        if (!d.hosts().contains(known)) {
                            MemberDescription gone = descriptions.remove(known);
                            MemberMonitor m = monitors.remove(known);
                            if (m != null) {
                                notifications.add(m::stop);
                            }
                            notifications.add(() -> listener.memberChanged(
                                    tier, gone, MemberDescription.unknown(known, "removed from the replica set")));
                        }
                    }
                }
            }
            primary = TierTopology.primaryOf(descriptions);
            topology = new TierTopology(tier, requiredSetName, Map.copyOf(descriptions), primary);
            primarySeen |= primary != null;
            boolean noneAnswers =
                    primary == null && descriptions.values().stream().allMatch(MemberDescription::failedCheck);
            if (!noneAnswers) {
                unreachableSince = 0;
            } else if (unreachableSince == 0) {
                unreachableSince = System.nanoTime();
            }
            if (primary != null && !primaryWaiters.isEmpty()) {
                wake = new ArrayList<>(primaryWaiters);
                primaryWaiters.clear();
            }
        }
        notifications.forEach(Runnable::run);
        for (CompletableFuture<ServerAddress> w : wake) {
            w.complete(primary);
        }
    }

    /** Members the monitor currently knows, for metrics and logs. */
    public synchronized Map<ServerAddress, MemberDescription> members() {
        return new HashMap<>(descriptions);
    }
}
