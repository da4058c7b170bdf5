package io.thermocline.proxy.pool;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;

/**
 * What a pool reports to metrics. A pool registers once; its connection counts are read when
 * metrics are scraped, so the request path only records how long each borrow waited.
 */
public interface PoolListener {
    /** A pool for {@code member} of {@code tier} exists; returns what the pool calls on every borrow. */
    BorrowRecorder poolCreated(Tier tier, ServerAddress member, PoolCounts counts);

    /** Called once per finished borrow: it got a connection or timed out after {@code waitNanos}. */
    interface BorrowRecorder {
        void borrowed(long waitNanos, boolean timedOut);
    }

    /** A pool's current connection counts, readable from any thread. */
    interface PoolCounts {
        int open();

        int inUse();

        int waiters();
    }

    PoolListener NONE = (tier, member, counts) -> (waitNanos, timedOut) -> { };
}
