package io.thermocline.proxy.tiered.writes;

/**
 * Called by the tiered write path between the reads that decide a write and the write itself, where a
 * worker step (a mirror, an eviction, a copy-up) can interleave. Production runs {@link #NONE}; tests run
 * that worker step there, so the race is proven to happen rather than hoped for.
 */
@FunctionalInterface
public interface WriteRaces {

    WriteRaces NONE = point -> {};

    void reached(Point point);

    enum Point {
        /** An insert looked its client-chosen {@code _id}s up and is about to choose its path. */
        INSERT_IDS_LOOKED_UP,
        /** A delete read one tier for its targets and has not yet read (or acted on) the other. */
        DELETE_BETWEEN_TIER_READS,
        /** A guarded write read its documents' fences and has not yet read the fast tier and the archive. */
        GUARDED_WRITE_FENCES_READ,
        /** A guarded write read the fast tier and the archive for its documents and has not begun the transaction that copies the missing ones in. */
        GUARDED_WRITE_TIERS_READ,
        /** A point update's guarded transaction has begun and is about to run the update unchecked ({@link HeldPointUpdate}). */
        HELD_UPDATE_IN_TRANSACTION,
        /** A retryable update or findAndModify found no recorded reply and is about to be forwarded as sent ({@link ExactlyOnce}). */
        RETRY_FORWARDING
    }
}
