package io.thermocline.proxy.cursor;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.security.UserName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.bson.BsonDocument;

/** The proxy's cursor table: proxy id to backend cursor, indexed by owner for clean-up. */
public final class CursorRegistry {

    /** How long the proxy keeps a cursor nobody continues: members time theirs out after 10 minutes by default. */
    public static final Duration IDLE_TIMEOUT = Duration.ofMinutes(30);

    private final ProxyCursorIds ids;
    private final Map<Long, CursorRoute> routes = new HashMap<>();
    private final Map<CursorOwner, Set<Long>> byOwner = new HashMap<>();
    private final Map<Long, Long> lastUsedNanos = new HashMap<>();
    private final Map<Long, Long> openedNanos = new HashMap<>();

    public CursorRegistry(ProxyCursorIds ids) {
        this.ids = ids;
    }

    public ProxyCursorIds ids() {
        return ids;
    }

    public CursorRoute register(
            Tier tier,
            ServerAddress member,
            long backendId,
            String namespace,
            BsonDocument lsid,
            CursorOwner owner,
            boolean noTimeout,
            UserName creator,
            long nowNanos) {
        return register(tier, member, backendId, namespace, lsid, lsid, owner, noTimeout, creator, nowNanos);
    }

    /** {@code clientLsid}: the session as the client named it, where the backend's ({@code lsid}) differs. */
    public synchronized CursorRoute register(
            Tier tier,
            ServerAddress member,
            long backendId,
            String namespace,
            BsonDocument lsid,
            BsonDocument clientLsid,
            CursorOwner owner,
            boolean noTimeout,
            UserName creator,
            long nowNanos) {
        CursorRoute route = new CursorRoute(
                ids.next(), tier, member, backendId, namespace, lsid, owner, noTimeout, creator, clientLsid);
        routes.put(route.proxyId(), route);
        lastUsedNanos.put(route.proxyId(), nowNanos);
        openedNanos.put(route.proxyId(), nowNanos);
        byOwner.computeIfAbsent(owner, o -> new HashSet<>()).add(route.proxyId());
        return route;
    }

    /** Looks a cursor up and marks it used at {@code nowNanos}. */
    public synchronized Optional<CursorRoute> use(long proxyId, long nowNanos) {
        CursorRoute r = routes.get(proxyId);
        if (r != null) {
            lastUsedNanos.put(proxyId, nowNanos);
        }
        return Optional.ofNullable(r);
    }

    /** When the cursor was registered (the {@code nowNanos} given then), if it is still in the table. */
    public synchronized OptionalLong openedNanos(long proxyId) {
        Long opened = openedNanos.get(proxyId);
        return opened == null ? OptionalLong.empty() : OptionalLong.of(opened);
    }

    /**
     * Removes cursors unused for longer than {@code idleNanos}: their member has timed them out
     * by then (10 minutes by default), so only the proxy's mapping would be left behind.
     */
    public synchronized List<CursorRoute> removeIdle(long idleNanos, long nowNanos) {
        List<CursorRoute> out = new ArrayList<>();
        for (CursorRoute r : new ArrayList<>(routes.values())) {
            Long last = lastUsedNanos.get(r.proxyId());
            if (!r.noTimeout() && last != null && nowNanos - last > idleNanos) {
                remove(r.proxyId());
                out.add(r);
            }
        }
        return out;
    }

    public synchronized Optional<CursorRoute> remove(long proxyId) {
        CursorRoute r = routes.remove(proxyId);
        lastUsedNanos.remove(proxyId);
        openedNanos.remove(proxyId);
        if (r != null) {
            Set<Long> owned = byOwner.get(r.owner());
            if (owned != null) {
                owned.remove(proxyId);
                if (owned.isEmpty()) {
                    byOwner.remove(r.owner());
                }
            }
        }
        return Optional.ofNullable(r);
    }

    /** Removes and returns every cursor of an owner that went away. */
    public synchronized List<CursorRoute> removeOwnedBy(CursorOwner owner) {
        Set<Long> owned = byOwner.remove(owner);
        List<CursorRoute> out = new ArrayList<>();
        if (owned != null) {
            for (Long id : owned) {
                lastUsedNanos.remove(id);
                openedNanos.remove(id);
                CursorRoute r = routes.remove(id);
                if (r != null) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    public synchronized int size() {
        return routes.size();
    }
}
