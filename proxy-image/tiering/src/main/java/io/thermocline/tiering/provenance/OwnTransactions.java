package io.thermocline.tiering.provenance;

import io.thermocline.tiering.metadata.TransactionId;
import java.util.LinkedHashSet;
import java.util.Iterator;
import java.util.Set;

/**
 * The feeder's memory of which transactions are Thermocline's own: those whose marker event it
 * has seen. A transaction's events are contiguous in the change stream, so a handful of recent
 * ones suffices; the one a checkpoint may cut through is persisted with the checkpoint.
 */
public final class OwnTransactions {

    private static final int REMEMBERED = 256;

    private final Set<TransactionId> recent = new LinkedHashSet<>();
    private TransactionId last;

    public OwnTransactions(TransactionId restored) {
        if (restored != null) {
            markOwn(restored);
        }
    }

    public void markOwn(TransactionId transaction) {
        recent.remove(transaction);
        recent.add(transaction);
        last = transaction;
        if (recent.size() > REMEMBERED) {
            Iterator<TransactionId> oldest = recent.iterator();
            oldest.next();
            oldest.remove();
        }
    }

    public boolean isOwn(TransactionId transaction) {
        return transaction != null && recent.contains(transaction);
    }

    /** The most recently marked transaction (persisted with a checkpoint that ends inside it). */
    public TransactionId last() {
        return last;
    }
}
