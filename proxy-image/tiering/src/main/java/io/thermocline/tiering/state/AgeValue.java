package io.thermocline.tiering.state;

import io.thermocline.config.CollectionPolicy;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

/**
 * The age of a document as its collection policy reads it, and how it was encoded.
 *
 * <p>Encodings read, per policy:
 * <ul>
 *   <li>{@code _id} policies: only an ObjectId, aged by its embedded creation second.</li>
 *   <li>any other age field: a BSON Date; a number (int32, int64, double, decimal128) read as epoch
 *       <em>milliseconds</em>, the unit of a BSON Date, floored to a whole millisecond; an ISO-8601
 *       string with an offset ({@code 2026-03-01T10:00:00Z}, {@code ...+02:00}) or a bare date
 *       ({@code 2026-03-01}, midnight UTC).</li>
 * </ul>
 * Numbers are never guessed to be seconds: a magnitude heuristic is not monotonic, and every proof
 * relies on {@code a >= b} in BSON order implying {@code age(a) >= age(b)}. Epoch seconds simply read
 * as very old ages (routed to the archive, evicted early): slow, never wrong.
 *
 * <p>Only encodings whose BSON order matches time order ({@link Encoding#orderMatchesTime()}) take
 * part in coverage and in routing proofs. ISO strings do not: string order is not time order
 * (offsets, fractional seconds, non-date strings such as {@code "zzz"} sort above every date, and a
 * collation changes string order), so a string comparison in a filter never proves hotness. Strings are
 * still read, so workers can age such documents.
 */
public record AgeValue(Instant instant, Encoding encoding) implements Comparable<AgeValue> {

    /** How the age was written in the document or the filter. */
    public enum Encoding {
        DATE(true),
        EPOCH_MILLIS(true),
        OBJECT_ID(true),
        ISO_STRING(false);

        private final boolean orderMatchesTime;

        Encoding(boolean orderMatchesTime) {
            this.orderMatchesTime = orderMatchesTime;
        }

        /** True when BSON comparison of two values of this encoding orders them as their ages. */
        public boolean orderMatchesTime() {
            return orderMatchesTime;
        }
    }

    private static final long MAX_OBJECT_ID_SECONDS = 0xFFFF_FFFFL;

    public AgeValue {
        Objects.requireNonNull(instant, "instant");
        Objects.requireNonNull(encoding, "encoding");
    }

    public boolean orderMatchesTime() {
        return encoding.orderMatchesTime();
    }

    /**
     * The age of one value of the age field. An array is aged by its latest element, matching how a
     * {@code $gte} filter matches an array when any element matches (elements in an order-preserving
     * encoding first, strings only when there is no other); nested arrays are not looked into, like
     * MongoDB's comparisons. Empty for null, missing, NaN and every unreadable value.
     */
    public static Optional<AgeValue> of(CollectionPolicy policy, BsonValue value) {
        Objects.requireNonNull(policy, "policy");
        if (value == null) {
            return Optional.empty();
        }
        if (value.isArray()) {
            return latest(policy, value.asArray().getValues());
        }
        return scalar(policy, value);
    }

    /**
     * The age of a whole document: follows the policy's dotted age field through embedded documents
     * and arrays of documents the way a MongoDB query path does, and takes the latest age found.
     */
    public static Optional<AgeValue> ofDocument(CollectionPolicy policy, BsonDocument document) {
        Objects.requireNonNull(policy, "policy");
        if (document == null) {
            return Optional.empty();
        }
        return latest(policy, valuesAt(policy.ageField(), document));
    }

    /**
     * The values a MongoDB query path reaches in a document: through embedded documents and arrays
     * of documents, with arrays at the end of the path flattened one level (as comparisons and sort
     * keys see them). Empty when the path reaches nothing.
     */
    public static List<BsonValue> valuesAt(String path, BsonDocument document) {
        List<BsonValue> found = new ArrayList<>();
        collect(document, path.split("\\."), 0, found);
        List<BsonValue> flattened = new ArrayList<>();
        for (BsonValue v : found) {
            if (v.isArray()) {
                flattened.addAll(v.asArray().getValues());
            } else {
                flattened.add(v);
            }
        }
        return flattened;
    }

    /**
     * The filter selecting exactly the documents a coverage bound at {@code oldestCovered} promises the
     * fast tier holds: an order-preserving encoding at or after the instant. The warmer copies with it and
     * the evictor removes its complement, so both agree with what the router proves.
     */
    public static BsonDocument atOrAfter(CollectionPolicy policy, Instant oldestCovered) {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(oldestCovered, "oldestCovered");
        String field = policy.ageField();
        if (policy.agedByObjectId()) {
            long seconds = oldestCovered.getEpochSecond() + (oldestCovered.getNano() > 0 ? 1 : 0);
            if (seconds > MAX_OBJECT_ID_SECONDS) {
                // No ObjectId is that young: select none rather than wrap around.
                byte[] max = new byte[12];
                Arrays.fill(max, (byte) 0xFF);
                return new BsonDocument(field, new BsonDocument("$gt", new BsonObjectId(new ObjectId(max))));
            }
            return new BsonDocument(field, new BsonDocument("$gte", new BsonObjectId(smallestObjectIdOfSecond(Math.max(0, seconds)))));
        }
        long millis = ceilMillis(oldestCovered);
        return new BsonDocument("$or", new BsonArray(List.of(
                new BsonDocument(field, new BsonDocument("$gte", new BsonDateTime(millis))),
                new BsonDocument(field, new BsonDocument("$gte", new BsonInt64(millis))))));
    }

    /** The first ObjectId a generator could produce in the given second (all other bytes zero). */
    public static ObjectId smallestObjectIdOfSecond(long epochSecond) {
        if (epochSecond < 0 || epochSecond > MAX_OBJECT_ID_SECONDS) {
            throw new IllegalArgumentException("an ObjectId timestamp is an unsigned 32-bit second, not " + epochSecond);
        }
        return new ObjectId(ByteBuffer.allocate(12).putInt((int) epochSecond).array());
    }

    @Override
    public int compareTo(AgeValue other) {
        return instant.compareTo(other.instant);
    }

    private static Optional<AgeValue> latest(CollectionPolicy policy, List<BsonValue> values) {
        AgeValue best = null;
        for (BsonValue element : values) {
            if (element.isArray()) {
                continue;
            }
            AgeValue age = scalar(policy, element).orElse(null);
            if (age != null && (best == null || ranksAbove(age, best))) {
                best = age;
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * Order-preserving ages outrank string ages, so an array's age is covered exactly when
     * {@link #atOrAfter} selects it; among equals in that respect, the later instant wins.
     */
    private static boolean ranksAbove(AgeValue candidate, AgeValue best) {
        if (candidate.orderMatchesTime() != best.orderMatchesTime()) {
            return candidate.orderMatchesTime();
        }
        return candidate.compareTo(best) > 0;
    }

    private static Optional<AgeValue> scalar(CollectionPolicy policy, BsonValue value) {
        if (policy.agedByObjectId()) {
            return value.isObjectId()
                    ? Optional.of(new AgeValue(Instant.ofEpochSecond(Integer.toUnsignedLong(value.asObjectId().getValue().getTimestamp())), Encoding.OBJECT_ID))
                    : Optional.empty();
        }
        return switch (value.getBsonType()) {
            case DATE_TIME -> Optional.of(new AgeValue(Instant.ofEpochMilli(value.asDateTime().getValue()), Encoding.DATE));
            case INT32 -> Optional.of(epochMillis(value.asInt32().getValue()));
            case INT64 -> Optional.of(epochMillis(value.asInt64().getValue()));
            case DOUBLE -> fromDouble(value.asDouble().getValue());
            case DECIMAL128 -> fromDecimal(value.asDecimal128().getValue());
            case STRING -> fromIsoString(value.asString().getValue());
            default -> Optional.empty();
        };
    }

    private static AgeValue epochMillis(long millis) {
        return new AgeValue(Instant.ofEpochMilli(millis), Encoding.EPOCH_MILLIS);
    }

    private static Optional<AgeValue> fromDouble(double d) {
        if (Double.isNaN(d)) {
            return Optional.empty();
        }
        // Flooring and clamping are both monotonic, so BSON numeric order still implies age order.
        double floored = Math.floor(d);
        if (floored >= (double) Long.MAX_VALUE) {
            return Optional.of(epochMillis(Long.MAX_VALUE));
        }
        if (floored <= (double) Long.MIN_VALUE) {
            return Optional.of(epochMillis(Long.MIN_VALUE));
        }
        return Optional.of(epochMillis((long) floored));
    }

    private static Optional<AgeValue> fromDecimal(Decimal128 d) {
        if (d.isNaN()) {
            return Optional.empty();
        }
        if (d.isInfinite()) {
            return Optional.of(epochMillis(d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE));
        }
        BigDecimal floored = d.bigDecimalValue().setScale(0, RoundingMode.FLOOR);
        if (floored.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) >= 0) {
            return Optional.of(epochMillis(Long.MAX_VALUE));
        }
        if (floored.compareTo(BigDecimal.valueOf(Long.MIN_VALUE)) <= 0) {
            return Optional.of(epochMillis(Long.MIN_VALUE));
        }
        return Optional.of(epochMillis(floored.longValueExact()));
    }

    private static Optional<AgeValue> fromIsoString(String s) {
        try {
            return Optional.of(new AgeValue(OffsetDateTime.parse(s).toInstant(), Encoding.ISO_STRING));
        } catch (DateTimeParseException notDateTime) {
            try {
                return Optional.of(new AgeValue(LocalDate.parse(s).atStartOfDay(ZoneOffset.UTC).toInstant(), Encoding.ISO_STRING));
            } catch (DateTimeParseException notDate) {
                return Optional.empty();
            }
        }
    }

    private static long ceilMillis(Instant instant) {
        try {
            long millis = instant.toEpochMilli();
            return instant.getNano() % 1_000_000 > 0 ? millis + 1 : millis;
        } catch (ArithmeticException outOfRange) {
            return instant.isBefore(Instant.EPOCH) ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static void collect(BsonValue current, String[] path, int depth, List<BsonValue> out) {
        if (depth == path.length) {
            out.add(current);
            return;
        }
        String part = path[depth];
        if (current.isDocument()) {
            BsonValue next = current.asDocument().get(part);
            if (next != null) {
                collect(next, path, depth + 1, out);
            }
        } else if (current.isArray()) {
            List<BsonValue> elements = current.asArray().getValues();
            if (isIndex(part)) {
                int index = Integer.parseInt(part);
                if (index < elements.size()) {
                    collect(elements.get(index), path, depth + 1, out);
                }
            }
            for (BsonValue element : elements) {
                if (element.isDocument()) {
                    collect(element, path, depth, out);
                }
            }
        }
    }

    private static boolean isIndex(String part) {
        return !part.isEmpty() && part.length() < 10 && part.chars().allMatch(Character::isDigit);
    }
}
