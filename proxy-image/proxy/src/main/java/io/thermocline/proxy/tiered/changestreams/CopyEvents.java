package io.thermocline.proxy.tiered.changestreams;

import io.thermocline.tiering.provenance.CopyMarks;
import io.thermocline.tiering.provenance.CopyMarks.Copied;
import java.util.HashSet;
import java.util.Set;
import org.bson.BsonTimestamp;

/**
 * Which events of an application change stream are copy-ups (the archived version of a cold document
 * inserted before the user's own write on it, in the user's transaction): one database shows only the
 * user's write, so they are left out. Decided on the transaction's {@link CopyMarks}, per cursor, as the
 * cursor passes the transaction's events in order.
 */
final class CopyEvents {

    /** A transaction as change events identify it: the commit's cluster time and the transaction number. */
    record Transaction(BsonTimestamp clusterTime, long txnNumber) {
    }

    private final boolean resumed;
    private Transaction current;
    private boolean first = true;
    private final Set<Copied> seen = new HashSet<>();

    /** @param resumed the cursor was opened with a resume token: its first transaction may be seen from its middle */
    CopyEvents(boolean resumed) {
        this.resumed = resumed;
    }

    /**
     * Whether the event (of {@code transaction}, on {@code document}) is a copy-up's insert; every event of a
     * transaction passes here, in order, so the cursor knows what it has seen of the document in it.
     */
    boolean isCopy(Transaction transaction, String operationType, Copied document, CopyMarks.Mark mark) {
        if (!transaction.equals(current)) {
            first = current == null;
            current = transaction;
            seen.clear();
        }
        boolean copy = isCopy(operationType, document, mark, seen.contains(document), resumed && first);
        seen.add(document);
        return copy;
    }

    /** Whether an event might be a copy at all (only inserts are): else the marks need not be looked up. */
    static boolean mayBeCopy(String operationType) {
        return "insert".equals(operationType);
    }

    /**
     * The rule. In the proxy's own transactions ({@code whole}) every insert of a marked document is its copy.
     * In an application's transaction the copy is the document's first event (a copy is made only of a
     * document the transaction has not written: one it inserted, changed or deleted is in the fast tier or
     * fenced), and a later insert is the application's re-insert after deleting it; a cursor that may have
     * started inside the transaction cannot tell which it saw first, so it keeps the insert (an extra event,
     * never a lost one).
     *
     * @param seenBefore            the cursor passed an earlier event of the document in this transaction
     * @param mayHaveStartedInside  the cursor was resumed and this is the first transaction it sees
     */
    static boolean isCopy(String operationType, Copied document, CopyMarks.Mark mark, boolean seenBefore,
                          boolean mayHaveStartedInside) {
        if (!mayBeCopy(operationType) || mark == null || document == null || !mark.copied().contains(document)) {
            return false;
        }
        return mark.whole() || !seenBefore && !mayHaveStartedInside;
    }
}
