package io.thermocline.tiering.window;

import io.thermocline.config.CollectionPolicy;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.bson.types.ObjectId;
import com.mongodb.client.model.Filters;

/**
 * The hot window of one collection as the workers query it: ages are BSON dates in
 * {@code ageField}, or the ObjectId's creation second when {@code ageField} is {@code _id}.
 * Documents whose age field holds anything else have no age: they are never evicted and never
 * warmed (MongoDB compares values of one BSON type only, so a date filter cannot match them).
 */
public record Window(CollectionPolicy policy) {

    /** The oldest age inside the window at {@code now}. */
    public Instant cutoff(Instant now) {
        return now.minus(policy.hotWindow());
    }

    /** Documents aged strictly before {@code cutoff}. */
    public Bson olderThan(Instant cutoff) {
        return Filters.lt(policy.ageField(), bound(cutoff));
    }

    /** Documents aged at or after {@code cutoff}. */
    public Bson atOrAfter(Instant cutoff) {
        return Filters.gte(policy.ageField(), bound(cutoff));
    }

    /** The value of the age field a query compares with {@code instant}. */
    public BsonValue bound(Instant instant) {
        if (policy.agedByObjectId()) {
            long second = instant.getEpochSecond() + (instant.getNano() > 0 ? 1 : 0);
            return new BsonObjectId(smallestObjectIdOfSecond(second));
        }
        return new BsonDateTime(instant.toEpochMilli());
    }

    /** The age of a document, if its age field holds a date (or an ObjectId under an {@code _id} policy). */
    public Optional<Instant> age(BsonDocument document) {
        return ageOf(field(document));
    }

    public Optional<Instant> ageOf(BsonValue value) {
        if (value == null) {
            return Optional.empty();
        }
        if (policy.agedByObjectId()) {
            return value.isObjectId() ? Optional.of(Instant.ofEpochSecond(value.asObjectId().getValue().getTimestamp() & 0xFFFFFFFFL))
                    : Optional.empty();
        }
        return value.isDateTime() ? Optional.of(Instant.ofEpochMilli(value.asDateTime().getValue())) : Optional.empty();
    }

    /** The raw value of the age field (dotted paths follow embedded documents). */
    public BsonValue field(BsonDocument document) {
        BsonValue current = document;
        for (String part : policy.ageField().split("\\.")) {
            if (current == null || !current.isDocument()) {
                return null;
            }
            current = current.asDocument().get(part);
        }
        return current;
    }

    /**
     * The lowest coverage bound that is proven once every document aged after {@code age} is
     * held, while documents aged exactly {@code age} may still be missing: the next representable age.
     */
    public Instant boundAbove(Instant age) {
        return policy.agedByObjectId() ? age.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1) : age.plusMillis(1);
    }

    static ObjectId smallestObjectIdOfSecond(long epochSecond) {
        byte[] bytes = new byte[12];
        bytes[0] = (byte) (epochSecond >>> 24);
        bytes[1] = (byte) (epochSecond >>> 16);
        bytes[2] = (byte) (epochSecond >>> 8);
        bytes[3] = (byte) epochSecond;
        return new ObjectId(bytes);
    }
}
