package io.thermocline.tiering.warmer;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.AgeValue;
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.window.Window;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * How far the warmer may lower a coverage bound (pure). Having copied every archive document aged
 * at or after {@code proven}, the fast tier holds all of them; the bound becomes the lower of the
 * current one and {@code proven}, but never below {@code evictedBelow}: older documents may have
 * been evicted since the warmer copied them.
 *
 * <p>The walk is the archive's descending sort on the age field, so its position is MongoDB's sort
 * key of the last document walked ({@link #walkKey}): for an array, or a dotted path through an
 * array of documents, the greatest value reached, in BSON order. What a position proves
 * ({@link #provenBy}) follows from that order: every document sorting above it was walked.
 */
public final class CoverageLowering {

    private CoverageLowering() {
    }

    /**
     * @param current       the current bound (null: nothing covered)
     * @param proven        every document aged at or after it is held
     * @param evictedBelow  the evictor's highest cutoff (null: never evicted)
     * @param walkFromTop   the warmer's walk started at the newest document, so nothing above
     *                      {@code proven} was skipped (required to turn "nothing" into a bound)
     */
    public static Instant lower(Instant current, Instant proven, Instant evictedBelow, boolean walkFromTop) {
        Instant next;
        if (current == null) {
            if (!walkFromTop) {
                return null;
            }
            next = proven;
        } else {
            next = proven.isBefore(current) ? proven : current;
        }
        if (evictedBelow != null && next.isBefore(evictedBelow)) {
            next = evictedBelow;
        }
        return next;
    }

    /**
     * A document's position in the warmer's walk: the key MongoDB sorts it by in a descending sort
     * on the policy's age field (the greatest value the path reaches; null when it reaches none).
     */
    public static BsonValue walkKey(CollectionPolicy policy, BsonDocument document) {
        List<BsonValue> values = AgeValue.valuesAt(policy.ageField(), document);
        return values.stream().max(BsonOrder.COMPARATOR).orElse(BsonNull.VALUE);
    }

    /**
     * The lowest bound proven once the walk has passed every document sorting above {@code walkKey}
     * (documents with exactly that key may still be ahead). Dates prove only while no number-aged
     * document waits in the window (numbers sort below every date, so the walk reaches them last);
     * a key of any other type (a string, a boolean, a timestamp...) proves nothing.
     */
    public static Optional<Instant> provenBy(CollectionPolicy policy, BsonValue walkKey, boolean numberAgedDocumentsAhead) {
        Window window = new Window(policy);
        if (policy.agedByObjectId()) {
            return walkKey.isObjectId() ? window.ageOf(walkKey).map(window::boundAbove) : Optional.empty();
        }
        if (walkKey.isDateTime() && numberAgedDocumentsAhead) {
            return Optional.empty();
        }
        if (!walkKey.isDateTime() && !walkKey.isNumber() && !walkKey.isDecimal128()) {
            return Optional.empty();
        }
        return window.ageOf(walkKey).map(window::boundAbove);
    }
}
