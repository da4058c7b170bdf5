package io.thermocline.proxy.tiered;

import io.thermocline.proxy.routing.RoutingTable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.bson.BsonTimestamp;

/**
 * What the tiered path must remember about an open cursor of a tiered read, by proxy cursor id, to
 * check or shape each getMore batch. Bounded: past {@code capacity} open cursors the least recently
 * used are forgotten (their batches then pass unchecked; docs/consistency.md).
 */
public final class TieredCursors {

    public sealed interface Basis {
    }

    /** A fast-tier cursor: each batch is trusted only while the coverage it was decided on still holds. */
    public record FastTier(TieringFollower.Decided decided, Predicate<RoutingTable> servesFast) implements Basis {
    }

    /** An archive cursor: its batches are as current as the fast-tier time its first batch waited for. */
    public record Archive(BsonTimestamp mirroredThrough) implements Basis {
    }

    private final Map<Long, Basis> open;

    TieredCursors(int capacity) {
        this.open = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Basis> eldest) {
                return size() > capacity;
            }
        };
    }

    public synchronized void opened(long proxyCursorId, Basis basis) {
        if (proxyCursorId != 0) {
            open.put(proxyCursorId, basis);
        }
    }

    public synchronized Basis get(long proxyCursorId) {
        return open.get(proxyCursorId);
    }

    public synchronized void closed(long proxyCursorId) {
        open.remove(proxyCursorId);
    }
}
