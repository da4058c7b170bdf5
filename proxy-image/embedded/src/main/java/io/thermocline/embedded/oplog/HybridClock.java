package io.thermocline.embedded.oplog;

import java.time.Clock;
import org.bson.BsonTimestamp;

/**
 * The replica set's hybrid logical clock: Timestamp(seconds, counter), strictly increasing for
 * ticks, and advanced (never moved back) by cluster times gossiped by clients.
 */
public final class HybridClock {
    private final Clock wallClock;
    private long last;

    public HybridClock(Clock wallClock) {
        this.wallClock = wallClock;
    }

    public synchronized BsonTimestamp tick() {
        long seconds = wallClock.millis() / 1000;
        long lastSeconds = last >>> 32;
        if (seconds > lastSeconds) {
            last = (seconds << 32) | 1;
        } else {
            last = last + 1;
        }
        return new BsonTimestamp(last);
    }

    public synchronized BsonTimestamp now() {
        return new BsonTimestamp(last);
    }

    public synchronized void advanceTo(BsonTimestamp seen) {
        if (Long.compareUnsigned(seen.getValue(), last) > 0) {
            last = seen.getValue();
        }
    }
}
