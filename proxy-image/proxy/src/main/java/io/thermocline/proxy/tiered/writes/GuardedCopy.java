package io.thermocline.proxy.tiered.writes;

import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.Fence;

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
     * A document the fast tier held at the attempt's read and no longer holds: the evictor removes only
     * what the archive holds identically (and leaves an EVICTION fence), so it is copied back; a user
     * delete stays deleted; without a fence something else removed it, and the attempt starts over.
     */
    static GuardedCopy ofVanished(Fence now) {
        if (now == null) {
            return START_OVER;
        }
        return now.kind() == Fence.Kind.EVICTION ? COPY : SKIP;
    }
}
