package io.thermocline.tiering.mode;

import java.util.HashMap;
import java.util.Map;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;

/**
 * How far the archive follower has brought the fast tier ({@code thermocline.state}, {@code _id: "archiveFollower"}).
 * {@code origin}: the {@code followFrom} it started from (a new one restarts it); {@code appliedThrough}:
 * every archive change up to this time is in the fast tier; {@code changing}: per namespace, the time of
 * the latest change it has begun to apply, written BEFORE applying, so a shadow comparison that reads it
 * after its fast-tier read knows whether the fast tier may hold something newer than the archive read saw.
 * The same document holds the {@link FollowerLease} (who may write these fields) and the last {@link FollowerResync};
 * both are read here and written by their own conditional updates ({@link ModeStore}).
 */
public record FollowerState(BsonTimestamp origin, BsonDocument resumeToken, BsonTimestamp appliedThrough,
                            Map<String, BsonTimestamp> changing, FollowerLease lease, FollowerResync resync) {

    public static final String ID = "archiveFollower";

    public static FollowerState none() {
        return new FollowerState(null, null, null, Map.of(), null, null);
    }

    /** Progress from {@code followFrom}: the fast tier equals the archive up to it. */
    public FollowerState restartedAt(BsonTimestamp followFrom) {
        return new FollowerState(followFrom, null, followFrom, Map.of(), lease, resync);
    }

    public BsonTimestamp changing(String namespace) {
        return changing.get(namespace);
    }

    public FollowerState withChanging(Map<String, BsonTimestamp> latest) {
        Map<String, BsonTimestamp> next = new HashMap<>(changing);
        latest.forEach((ns, t) -> next.merge(ns, t, (a, b) -> a.compareTo(b) >= 0 ? a : b));
        return new FollowerState(origin, resumeToken, appliedThrough, next, lease, resync);
    }

    /** {@code changing} set as given, lower values included (only after a resync, which knows every version it wrote). */
    public FollowerState withChangingReset(Map<String, BsonTimestamp> latest) {
        return new FollowerState(origin, resumeToken, appliedThrough, Map.copyOf(latest), lease, resync);
    }

    public FollowerState applied(BsonDocument token, BsonTimestamp through) {
        return new FollowerState(origin, token == null ? resumeToken : token, through, changing, lease, resync);
    }

    /** Resumes from a fresh stream position (after a resync): no token, start just after {@code from}. */
    public FollowerState resumingAfter(BsonTimestamp from) {
        return new FollowerState(origin, null, from, changing, lease, resync);
    }

    /** The progress fields, without the lease and the resync report (each has its own writes). */
    BsonDocument progressFields() {
        BsonDocument ns = new BsonDocument();
        changing.forEach((k, v) -> ns.append(k.replace('.', '\u0001'), v));
        return new BsonDocument("origin", origin == null ? BsonNull.VALUE : origin)
                .append("resumeToken", resumeToken == null ? BsonNull.VALUE : resumeToken)
                .append("appliedThrough", appliedThrough == null ? BsonNull.VALUE : appliedThrough)
                .append("changing", ns);
    }

    /** What {@code thermocline status} shows: the holder and term, how far it applied, the last resync. */
    public BsonDocument toStatus() {
        return new BsonDocument("holder", lease == null ? BsonNull.VALUE : new BsonString(lease.owner()))
                .append("term", new BsonInt64(lease == null ? 0 : lease.term()))
                .append("leaseExpiresAt", lease == null ? BsonNull.VALUE : new BsonDateTime(lease.expiresAt().toEpochMilli()))
                .append("appliedThrough", appliedThrough == null ? BsonNull.VALUE : appliedThrough)
                .append("resync", resync == null ? BsonNull.VALUE : resync.toBson());
    }

    static FollowerState fromBson(BsonDocument d) {
        Map<String, BsonTimestamp> changing = new HashMap<>();
        d.getDocument("changing", new BsonDocument()).forEach((k, v) -> changing.put(k.replace('\u0001', '.'), v.asTimestamp()));
        return new FollowerState(d.isTimestamp("origin") ? d.getTimestamp("origin") : null,
                d.isDocument("resumeToken") ? d.getDocument("resumeToken") : null,
                d.isTimestamp("appliedThrough") ? d.getTimestamp("appliedThrough") : null, changing,
                d.isDocument("lease") ? FollowerLease.fromBson(d.getDocument("lease")) : null,
                d.isDocument("resync") ? FollowerResync.fromBson(d.getDocument("resync")) : null);
    }
}
