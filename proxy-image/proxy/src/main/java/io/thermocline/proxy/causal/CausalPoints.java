package io.thermocline.proxy.causal;

import io.thermocline.proxy.session.SessionKey;
import io.thermocline.tiering.cache.ExpiringCache;
import org.bson.BsonTimestamp;

import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The causal point of every client: the latest fast-tier {@code operationTime} it has observed,
 * per logical session ({@code lsid}) and per connection (clients without sessions, and drivers
 * whose implicit sessions change between operations). A read takes the later of the two, so a
 * session that moves between connections and a connection that changes implicit sessions both
 * keep read-your-writes. Bounded: the least recently used entries are forgotten first, and an entry
 * no operation used for the session timeout is forgotten too (its session is gone on the servers).
 */
public final class CausalPoints {

    private final ExpiringCache<Object, BsonTimestamp> points;

    public CausalPoints(int capacity) {
        this(capacity, SessionKey.TIMEOUT, System::nanoTime);
    }

    public CausalPoints(int capacity, Duration idle, LongSupplier nanoTime) {
        this.points = new ExpiringCache<>(capacity, idle, nanoTime);
    }

    /** Records a fast-tier operation time seen by this client. */
    public synchronized void observed(Optional<SessionKey> session, long connectionId, BsonTimestamp operationTime) {
        if (operationTime == null) {
            return;
        }
        session.ifPresent(s -> points.merge(s, operationTime, CausalPoints::later));
        points.merge(connectionId, operationTime, CausalPoints::later);
    }

    /** The point a read by this client must not go behind; null when it has seen no fast-tier write. */
    public synchronized BsonTimestamp point(Optional<SessionKey> session, long connectionId) {
        BsonTimestamp byConnection = points.get(connectionId);
        BsonTimestamp bySession = session.map(points::get).orElse(null);
        if (byConnection == null) {
            return bySession;
        }
        return bySession == null ? byConnection : later(bySession, byConnection);
    }

    private static BsonTimestamp later(BsonTimestamp a, BsonTimestamp b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
