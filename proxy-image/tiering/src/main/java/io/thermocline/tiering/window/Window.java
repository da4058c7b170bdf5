package io.thermocline.tiering.window;

import com.mongodb.client.model.Filters;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.AgeValue;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * The hot window of one collection as the workers query it, in the encodings whose BSON order is
 * time order ({@link AgeValue}: dates, epoch-millisecond numbers, ObjectIds under an {@code _id}
 * policy) — the same ones the router's coverage proofs use. Documents aged otherwise (missing,
 * ISO strings, other types) are never evicted and never warmed.
 */
public record Window(CollectionPolicy policy) {

    /** The oldest age inside the window at {@code now}. */
    public Instant cutoff(Instant now) {
        return now.minus(policy.hotWindow());
    }

    /** Candidates aged strictly before {@code cutoff} (an array matches if any element does: check {@link #age}). */
    public Bson olderThan(Instant cutoff) {
        if (policy.agedByObjectId()) {
            return Filters.lt(policy.ageField(), bound(cutoff));
        }
        return Filters.or(Filters.lt(policy.ageField(), bound(cutoff)),
                Filters.lt(policy.ageField(), new BsonInt64(cutoff.toEpochMilli())));
    }

    /** Documents aged at or after {@code cutoff}: exactly what a coverage bound at {@code cutoff} promises. */
    public Bson atOrAfter(Instant cutoff) {
        return AgeValue.atOrAfter(policy, cutoff);
    }

    /** Documents whose age field is a number at or after {@code cutoff} (epoch milliseconds). */
    public Bson numbersAtOrAfter(Instant cutoff) {
        // a numeric comparison matches numbers only (BSON type bracketing)
        return Filters.gte(policy.ageField(), new BsonInt64(cutoff.toEpochMilli()));
    }

    /** The value of the age field a query compares with {@code instant}. */
    public BsonValue bound(Instant instant) {
        if (policy.agedByObjectId()) {
            long second = instant.getEpochSecond() + (instant.getNano() > 0 ? 1 : 0);
            return new BsonObjectId(AgeValue.smallestObjectIdOfSecond(second));
        }
        return new BsonDateTime(instant.toEpochMilli());
    }

    /** The age of a document, when it is in an order-preserving encoding (see {@link AgeValue}). */
    public Optional<Instant> age(BsonDocument document) {
        return AgeValue.ofDocument(policy, document).filter(AgeValue::orderMatchesTime).map(AgeValue::instant);
    }

    /** The age of one value of the age field, when it is in an order-preserving encoding. */
    public Optional<Instant> ageOf(BsonValue value) {
        return AgeValue.of(policy, value).filter(AgeValue::orderMatchesTime).map(AgeValue::instant);
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
}
