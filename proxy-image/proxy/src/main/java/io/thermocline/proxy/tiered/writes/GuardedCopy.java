package io.thermocline.proxy.tiered.writes;

import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.Fence;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonValue;

/**
 * What a guarded transaction does with one document it needs in the fast tier. Unlike a warm copy,
 * which may skip a document and try later, the write runs now: a copy the rule refuses for a reason that
 * may clear (too slow, an eviction since the read) starts the attempt over instead.
 */
enum GuardedCopy {
    COPY,
    /** Nothing to copy: the fast tier holds it, the archive lacks it, or a user deleted it. */
    SKIP,
    START_OVER;

    /** A document the archive held at the attempt's read, by the workers' copy-up rule. */
    static GuardedCopy ofArchived(CopyUpDecision decision, Fence now) {
        return switch (decision) {
            case COPY -> COPY;
            case SKIP_TOO_SLOW, SKIP_NAMESPACE_DROPPED -> START_OVER;
            case SKIP_DELETED_SINCE_READ -> now != null && now.kind() == Fence.Kind.USER_DELETE ? SKIP : START_OVER;
            case SKIP_FAST_TIER_HAS_IT, SKIP_NOT_IN_ARCHIVE -> SKIP;
        };
    }

    /**
     * A document the fast tier held at the attempt's read and no longer holds: the evictor leaves an
     * EVICTION fence that carries the removed version, so it is copied back; a user
     * delete stays deleted; without a fence something else removed it, and the attempt starts over.
     */
    static GuardedCopy ofVanished(Fence now) {
        if (now == null) {
            return START_OVER;
        }
        return now.kind() == Fence.Kind.EVICTION ? COPY : SKIP;
    }

    /**
     * Which of {@code archived} (ids the archive held at the attempt's read) to copy, decided inside the
     * transaction; null when the attempt must start over (the collection was dropped since the read, or
     * one document's copy must start over).
     *
     * @param present      those the fast tier holds, read in the transaction
     * @param fencesAtRead fences (the namespace's drop fence included) read before the archive read
     * @param fencesNow    the same, read in the transaction after the claim
     */
    static List<BsonValue> toCopy(List<BsonValue> archived, Set<BsonValue> present, Map<BsonValue, Fence> fencesAtRead,
                                  Map<BsonValue, Fence> fencesNow, Instant now, Duration inFlight, Duration maxInFlight) {
        if (CopyUpDecision.namespaceDropped(fencesAtRead.get(Fence.namespaceId()), fencesNow.get(Fence.namespaceId()), now, maxInFlight)) {
            return null;
        }
        List<BsonValue> copies = new ArrayList<>();
        for (BsonValue id : archived) {
            CopyUpDecision decision = CopyUpDecision.decide(fencesAtRead.get(id), fencesNow.get(id), true, present.contains(id),
                    inFlight, maxInFlight);
            switch (ofArchived(decision, fencesNow.get(id))) {
                case COPY -> copies.add(id);
                case START_OVER -> {
                    return null;
                }
                case SKIP -> { }
            }
        }
        return copies;
    }
}
