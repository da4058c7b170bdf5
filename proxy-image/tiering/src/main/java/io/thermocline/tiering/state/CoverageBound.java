package io.thermocline.tiering.state;

import java.time.Instant;
import java.util.Objects;

/**
 * What the fast tier provably holds for one tiered collection: either nothing, or every document
 * whose age (as {@link AgeValue} reads it, in an order-preserving encoding) is at or after an instant.
 * The warmer lowers the bound as it completes ranges; the evictor raises it as it removes documents.
 * The routing proof only ever asks {@link #covers(Instant)}.
 */
public sealed interface CoverageBound {

    /** The state before the warmer has completed anything: the fast tier proves nothing. */
    CoverageBound NOTHING = new Nothing();

    /** True when every document aged {@code age} or later is held by the fast tier. */
    boolean covers(Instant age);

    static CoverageBound nothing() {
        return NOTHING;
    }

    static CoverageBound from(Instant oldestCovered) {
        return new From(oldestCovered);
    }

    /** The fast tier holds no provable range (a fresh tier, or a bound that was lost). */
    record Nothing() implements CoverageBound {
        @Override
        public boolean covers(Instant age) {
            return false;
        }

        @Override
        public String toString() {
            return "nothing covered";
        }
    }

    /** The fast tier holds every document aged {@code oldestCovered} or later. */
    record From(Instant oldestCovered) implements CoverageBound {
        public From {
            Objects.requireNonNull(oldestCovered, "oldestCovered");
        }

        @Override
        public boolean covers(Instant age) {
            return age != null && !age.isBefore(oldestCovered);
        }

        @Override
        public String toString() {
            return "covers age >= " + oldestCovered;
        }
    }
}
