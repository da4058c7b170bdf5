package io.thermocline.tiering.warmer;

import java.time.Instant;

/**
 * How far the warmer may lower a coverage bound (pure). Having copied every archive document aged
 * at or after {@code proven}, the fast tier holds all of them; the bound becomes the lower of the
 * current one and {@code proven}, but never below {@code evictedBelow}: older documents may have
 * been evicted since the warmer copied them.
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
}
