package io.thermocline.tiering.mode;

import java.util.HashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;

/**
 * How far the archive follower has brought the fast tier ({@code thermocline.state}, {@code _id: "archiveFollower"}).
 * {@code origin}: the {@code followFrom} it started from (a new one restarts it); {@code appliedThrough}:
 * every archive change up to this time is in the fast tier; {@code changing}: per namespace, the time of
 * the latest change it has begun to apply, written BEFORE applying, so a shadow comparison that reads it
 * after its fast-tier read knows whether the fast tier may hold something newer than the archive read saw.
 */
public record FollowerState(BsonTimestamp origin, BsonDocument resumeToken, BsonTimestamp appliedThrough,
                            Map<String, BsonTimestamp> changing) {

    public static final String ID = "archiveFollower";

    public static FollowerState none() {
        return new FollowerState(null, null, null, Map.of());
    }

    public BsonTimestamp changing(String namespace) {
        return changing.get(namespace);
    }

    public FollowerState withChanging(Map<String, BsonTimestamp> latest) {
        Map<String, BsonTimestamp> next = new HashMap<>(changing);
        latest.forEach((ns, t) -> next.merge(ns, t, (a, b) -> a.compareTo(b) >= 0 ? a : b));
        return new FollowerState(origin, resumeToken, appliedThrough, next);
    }

    public FollowerState applied(BsonDocument token, BsonTimestamp through) {
        return new FollowerState(origin, token == null ? resumeToken : token, through, changing);
    }

    BsonDocument toBson() {
        BsonDocument ns = new BsonDocument();
        changing.forEach((k, v) -> ns.append(k.replace('.', '\u0001'), v));
        return new BsonDocument("_id", new BsonString(ID))
                .append("origin", origin == null ? BsonNull.VALUE : origin)
                .append("resumeToken", resumeToken == null ? BsonNull.VALUE : resumeToken)
                .append("appliedThrough", appliedThrough == null ? BsonNull.VALUE : appliedThrough)
                .append("changing", ns);
    }

    static FollowerState fromBson(BsonDocument d) {
        Map<String, BsonTimestamp> changing = new HashMap<>();
        d.getDocument("changing", new BsonDocument()).forEach((k, v) -> changing.put(k.replace('\u0001', '.'), v.asTimestamp()));
        return new FollowerState(d.isTimestamp("origin") ? d.getTimestamp("origin") : null,
                d.isDocument("resumeToken") ? d.getDocument("resumeToken") : null,
                d.isTimestamp("appliedThrough") ? d.getTimestamp("appliedThrough") : null, changing);
    }
}
