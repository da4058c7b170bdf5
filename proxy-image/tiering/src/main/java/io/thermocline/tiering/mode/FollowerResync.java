package io.thermocline.tiering.mode;

import java.time.Instant;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;

/**
 * The follower's last resync (the archive's oplog no longer held its resume point): when it began and
 * ended, why, and what it changed in the fast tier. {@code count} is every resync since the follower's
 * document was created. Shown by {@code thermocline status}.
 */
public record FollowerResync(long count, Instant startedAt, Instant finishedAt, String reason, long copied, long deleted) {

    public boolean running() {
        return finishedAt == null;
    }

    BsonDocument toBson() {
        return new BsonDocument("count", new BsonInt64(count)).append("startedAt", new BsonDateTime(startedAt.toEpochMilli()))
                .append("finishedAt", finishedAt == null ? BsonNull.VALUE : new BsonDateTime(finishedAt.toEpochMilli()))
                .append("reason", new BsonString(reason)).append("copied", new BsonInt64(copied)).append("deleted", new BsonInt64(deleted));
    }

    static FollowerResync fromBson(BsonDocument d) {
        return new FollowerResync(d.getNumber("count").longValue(), Instant.ofEpochMilli(d.getDateTime("startedAt").getValue()),
                d.isDateTime("finishedAt") ? Instant.ofEpochMilli(d.getDateTime("finishedAt").getValue()) : null,
                d.getString("reason").getValue(), d.getNumber("copied").longValue(), d.getNumber("deleted").longValue());
    }
}
