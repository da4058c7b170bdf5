package io.thermocline.tiering.metadata;

import java.time.Instant;
import org.bson.BsonValue;

/**
 * Where the warmer stands in one collection: it walks the archive newest first, and every document
 * sorting before ({@code lastAge}, {@code lastId}) in that order has been copied or found newer in
 * the fast tier. {@code cutoff} is the oldest age it is warming down to.
 */
public record WarmerCheckpoint(Instant cutoff, BsonValue lastAge, BsonValue lastId, boolean complete, long copied, Instant updatedAt) {

    public boolean started() {
        return lastId != null;
    }
}
