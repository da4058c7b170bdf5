package io.thermocline.proxy.tiered.writes;

/** How an insert of client-chosen {@code _id}s runs, once both tiers were asked which of them exist. */
enum InsertPath {
    /** No document holds any of them: the fast tier as sent (its unique index sees every later copy). */
    AS_SENT,
    /**
     * A retryable insert whose existing documents are exactly the ones it carries: likely its own first
     * attempt, which only the fast tier can tell; promote them and forward as sent (see {@code Inserts}).
     */
    PROMOTE_THEN_AS_SENT,
    /** An existing document holds one of them: a guarded transaction, so the fast tier answers E11000. */
    GUARDED;

    static InsertPath of(boolean anyExists, boolean retryable, boolean existingAreTheInserted) {
        if (!anyExists) {
            return AS_SENT;
        }
        return retryable && existingAreTheInserted ? PROMOTE_THEN_AS_SENT : GUARDED;
    }
}
