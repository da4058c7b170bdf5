package io.thermocline.proxy.pool;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;

/** What a pool reports to metrics. */
public interface PoolListener {
    /** A borrow finished: it got a connection or timed out after {@code waitNanos}. */
    void borrowed(Tier tier, ServerAddress member, long waitNanos, boolean timedOut);

    /** Connection counts changed. */
    void sizeChanged(Tier tier, ServerAddress member, int open, int inUse, int waiters);

    PoolListener NONE = new PoolListener() {
        @Override
        public void borrowed(Tier tier, ServerAddress member, long waitNanos, boolean timedOut) {
        }

        @Override
        public void sizeChanged(Tier tier, ServerAddress member, int open, int inUse, int waiters) {
        }
    };
}
