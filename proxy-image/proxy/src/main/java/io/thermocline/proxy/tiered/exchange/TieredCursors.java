package io.thermocline.proxy.tiered.exchange;

import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.tiering.cache.ExpiringCache;
import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.bson.BsonTimestamp;

/**
 * What the tiered path must remember about an open cursor of a tiered read, by proxy cursor id, to
 * check or shape each getMore batch. Bounded: past {@code capacity} open cursors the least recently
 * used are forgotten (their batches then pass unchecked; docs/consistency.md), and so is a cursor no
 * getMore used for twice the proxy's cursor idle timeout: the cursor table has dropped it by then, so
 * no getMore can reach it. A {@code noCursorTimeout} cursor, which the table keeps, leaves only by capacity.
 */
public final class TieredCursors {

    public sealed interface Basis {}

    /** A fast-tier cursor: each batch is trusted only while the coverage it was decided on still holds. */
    public record FastTier(TieringFollower.Decided decided, Predicate<RoutingTable> servesFast) implements Basis {}

    /** An archive cursor: its batches are as current as the fast-tier time its first batch waited for. */
    public record Archive(BsonTimestamp mirroredThrough) implements Basis {}

    /** Past the cursor table's idle timeout, however late its sweep runs. */
    static final Duration IDLE = CursorRegistry.IDLE_TIMEOUT.multipliedBy(2);

    private final ExpiringCache<Long, Basis> open;
    private final ExpiringCache<Long, Basis> openWithoutTimeout;

    public TieredCursors(int capacity) {
        this(capacity, IDLE, System::nanoTime);
    }

    TieredCursors(int capacity, Duration idle, LongSupplier nanoTime) {
        this.open = new ExpiringCache<>(capacity, idle, nanoTime);
        this.openWithoutTimeout = new ExpiringCache<>(capacity, Duration.ZERO, nanoTime);
    }

    /** {@code noTimeout}: the cursor was opened with {@code noCursorTimeout}. */
    public void opened(long proxyCursorId, Basis basis, boolean noTimeout) {
        if (proxyCursorId != 0) {
            (noTimeout ? openWithoutTimeout : open).put(proxyCursorId, basis);
        }
    }

    public Basis get(long proxyCursorId) {
        Basis basis = open.get(proxyCursorId);
        return basis != null ? basis : openWithoutTimeout.get(proxyCursorId);
    }

    public void closed(long proxyCursorId) {
        open.remove(proxyCursorId);
        openWithoutTimeout.remove(proxyCursorId);
    }
}
