package io.thermocline.tiering.feeder;

import io.thermocline.tiering.metadata.MetadataStore;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonTimestamp;

/**
 * The one place that decides how far the feeder may publish mirrored-through. The invariant
 * (docs/consistency.md): the archive holds every fast-tier write at or before the published time, or
 * a newer version of its document. A batch's last cluster time proves that only when every event up
 * to it carried the document's state at or after the event; some do not:
 * <ul>
 * <li>an insert, replace or update whose image was missing at its lookup: a later write deleted the
 *     document first, so the event mirrors nothing and the archive keeps the version before it until the
 *     delete's event is applied ({@link MirrorPlan#missingImageAt});</li>
 * <li>a restarted feeder (a crash, a retried batch, a lease taken over) does not know what its
 *     predecessor was waiting for;</li>
 * <li>a resync scanned the fast tier after its stream position: a document deleted in between was
 *     not copied.</li>
 * </ul>
 * Each is a hold: mirrored-through stays below the write until the stream has delivered, and the
 * archive acknowledged, every event up to a probe written after the lookup (or the restart, or the
 * scan). Whatever removed the document happened before that probe, so by then its event is applied.
 * This waits for a position in the stream, not for a particular event, so it holds for deletes the
 * feeder cannot see by key (evictions in Thermocline's own transactions, drops) as well.
 * A fourth kind has no probe that resolves it: a <b>dead letter</b>, a mirror write the archive refused for good (a
 * validator, a unique index only the archive has). The archive keeps the version before it until the cause is fixed
 * and a retry lands it, so while any dead letter is open mirrored-through does not move at all: it was published
 * before the refused write's batch, and every letter recorded later is recorded before its batch publishes.
 * Pure: the caller writes the probes and persists the result.
 */
final class UnresolvedWrites {

    /** Mirrored-through stays at or below {@code below} until the stream passed {@code probe}. */
    private record Hold(BsonTimestamp below, BsonTimestamp probe) {}

    private final List<Hold> holds = new ArrayList<>();

    /** Dead letters waiting (recorded and majority-acknowledged before any publish this decides). */
    private long deadLetters;

    /** Keeps mirrored-through at or below {@code below} until a batch reaching {@code probe} is acknowledged. */
    void hold(BsonTimestamp below, BsonTimestamp probe) {
        holds.add(new Hold(below, probe));
    }

    /** How many dead letters are open now: while any is, mirrored-through stays where it was published. */
    void deadLetters(long open) {
        deadLetters = open;
    }

    /**
     * The mirrored-through to publish once a batch planned through {@code planned} is in the archive:
     * releases the holds whose probe the batch reached ({@code reached}, the batch's last event; null
     * when no stream batch was applied), then never above a hold left, never below {@code published},
     * and {@code published} itself while a dead letter is open.
     */
    BsonTimestamp publishable(BsonTimestamp published, BsonTimestamp planned, BsonTimestamp reached) {
        if (reached != null) {
            holds.removeIf(hold -> hold.probe().compareTo(reached) <= 0);
        }
        if (deadLetters > 0) {
            return published;
        }
        BsonTimestamp through = planned;
        for (Hold hold : holds) {
            if (hold.below().compareTo(through) < 0) {
                through = hold.below();
            }
        }
        return MetadataStore.max(published, through);
    }

    /** Whether some hold or dead letter keeps mirrored-through back (for logs and tests). */
    boolean holding() {
        return !holds.isEmpty() || deadLetters > 0;
    }
}
