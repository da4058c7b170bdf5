package io.thermocline.proxy.session;

import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

import java.util.Optional;

/**
 * The latest signed {@code $clusterTime} one tier has shown the proxy. Each tier keeps its own:
 * a replica set rejects (or cannot verify) another set's signature, so a client's gossip is
 * never forwarded; the proxy sends the tier's own latest instead.
 */
public final class ClusterClock {
    private volatile BsonDocument latest;

    public void advance(BsonDocument clusterTime) {
        BsonTimestamp seen = timestampOf(clusterTime);
        if (seen == null) {
            return;
        }
        synchronized (this) {
            BsonTimestamp current = latest == null ? null : timestampOf(latest);
            if (current == null || seen.compareTo(current) > 0) {
                latest = clusterTime;
            }
        }
    }

    public Optional<BsonDocument> latest() {
        return Optional.ofNullable(latest);
    }

    private static BsonTimestamp timestampOf(BsonDocument clusterTime) {
        BsonValue t = clusterTime == null ? null : clusterTime.get("clusterTime");
        return t != null && t.isTimestamp() ? t.asTimestamp() : null;
    }
}
