package io.thermocline.tiering.metadata;

import java.time.Instant;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/**
 * How far the feeder has mirrored, written only after the archive acknowledged every write up to
 * it. {@code resumeToken} is where the change stream restarts; {@code mirroredThrough} the cluster
 * time of the last event it covers; {@code openOwnTransaction} the Thermocline transaction the token
 * may sit inside (its marker event is behind the token, its remaining events are not).
 * {@code version} makes every update a compare-and-set.
 */
public record FeederCheckpoint(
        BsonDocument resumeToken,
        BsonTimestamp mirroredThrough,
        TransactionId openOwnTransaction,
        long mirroredEvents,
        double lagSeconds,
        long pendingEvents,
        String owner,
        Instant leaseExpiresAt,
        long version) {

    public static final BsonTimestamp NOTHING_MIRRORED = new BsonTimestamp(0, 0);

    public static FeederCheckpoint initial() {
        return new FeederCheckpoint(null, NOTHING_MIRRORED, null, 0, 0, 0, null, Instant.EPOCH, 0);
    }

    /** True when every fast-tier write at or before {@code clusterTime} is in the archive. */
    public boolean covers(BsonTimestamp clusterTime) {
        return clusterTime == null || mirroredThrough.compareTo(clusterTime) >= 0;
    }
}
