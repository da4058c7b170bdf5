package io.thermocline.tiering.provenance;

import io.thermocline.tiering.cache.ExpiringCache;
import io.thermocline.tiering.metadata.TransactionId;
import java.time.Duration;

/**
 * The feeder's memory of which transactions are Thermocline's own: those whose marker event it
 * has seen. A transaction's events are contiguous in the change stream, so a handful of recent
 * ones suffices; the one a checkpoint may cut through is persisted with the checkpoint.
 */
public final class OwnTransactions {

    private static final int REMEMBERED = 256;

    /** The least recently marked go first; no expiry: the stream, not the clock, says what is recent. */
    private final ExpiringCache<TransactionId, Boolean> recent = new ExpiringCache<>(REMEMBERED, Duration.ZERO);
    private TransactionId last;

    public OwnTransactions(TransactionId restored) {
        if (restored != null) {
            markOwn(restored);
        }
    }

    public void markOwn(TransactionId transaction) {
        recent.put(transaction, Boolean.TRUE);
        last = transaction;
    }

    public boolean isOwn(TransactionId transaction) {
        return transaction != null && recent.contains(transaction);
    }

    /** The most recently marked transaction (persisted with a checkpoint that ends inside it). */
    public TransactionId last() {
        return last;
    }
}
