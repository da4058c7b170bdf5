package io.thermocline.tiering.mode;

import java.time.Instant;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;

/**
 * Who may follow the archive: the {@code lease} field of the follower's document ({@code thermocline.state},
 * {@code _id: "archiveFollower"}). {@code term} grows with every change of holder; every write the follower makes
 * is conditional on its term in the same transaction, so a deposed follower's write fails instead of landing.
 * {@code expiresAt} only decides when another instance may take over (liveness); the term decides safety.
 */
public record FollowerLease(String owner, long term, Instant expiresAt) {

    public boolean heldBy(String instance) {
        return owner.equals(instance);
    }

    public boolean expired(Instant now) {
        return !expiresAt.isAfter(now);
    }

    BsonDocument toBson() {
        return new BsonDocument("owner", new BsonString(owner)).append("term", new BsonInt64(term))
                .append("expiresAt", new BsonDateTime(expiresAt.toEpochMilli()));
    }

    static FollowerLease fromBson(BsonDocument d) {
        return new FollowerLease(d.getString("owner").getValue(), d.getNumber("term").longValue(),
                Instant.ofEpochMilli(d.getDateTime("expiresAt").getValue()));
    }
}
