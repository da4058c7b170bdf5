package io.thermocline.proxy.session;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The latest signed {@code $clusterTime} one tier has shown the proxy. Each tier keeps its own:
 * a replica set rejects (or cannot verify) another set's signature, so a client's gossip is
 * never forwarded; the proxy sends the tier's own latest instead.
 */
public final class ClusterClock {
    /** The document and its time, kept together: every reply is compared with it, and reading the time from the document each time was a walk of it. */
    private record Seen(BsonDocument clusterTime, BsonTimestamp time) {}

    private volatile Seen latest;

    public void advance(BsonDocument clusterTime) {
        BsonTimestamp seen = timestampOf(clusterTime);
        if (seen == null) {
            return;
        }
        Seen current = latest;
        if (current != null && seen.compareTo(current.time()) <= 0) {
            return; // the common case, a time already known: no lock
        }
        synchronized (this) {
            current = latest;
            if (current == null || seen.compareTo(current.time()) > 0) {
                latest = new Seen(clusterTime, seen);
            }
        }
    }

    public Optional<BsonDocument> latest() {
        Seen s = latest;
        return s == null ? Optional.empty() : Optional.of(s.clusterTime());
    }

    /** The time of {@link #latest()}, or null. */
    public BsonTimestamp latestTime() {
        Seen s = latest;
        return s == null ? null : s.time();
    }

    private static BsonTimestamp timestampOf(BsonDocument clusterTime) {
        BsonValue t = clusterTime == null ? null : clusterTime.get("clusterTime");
        return t != null && t.isTimestamp() ? t.asTimestamp() : null;
    }
}
