package io.thermocline.tiering;

import org.bson.BsonTimestamp;

/** Arithmetic on cluster times that the feeder and the proxy both need. */
public final class ClusterTimes {

    private ClusterTimes() {
    }

    /** The greatest cluster time strictly before {@code time}. */
    public static BsonTimestamp justBefore(BsonTimestamp time) {
        if (time.getInc() > 0) {
            return new BsonTimestamp(time.getTime(), time.getInc() - 1);
        }
        return new BsonTimestamp(time.getTime() - 1, Integer.MAX_VALUE);
    }
}
