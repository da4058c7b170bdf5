package io.thermocline.tiering.provenance;

import java.time.Duration;
import java.time.Instant;

/**
 * Whether a document read from the archive may be copied into the fast tier (warm copy or
 * read-through promotion). Decided inside the fast-tier transaction that would insert it.
 */
public enum CopyUpDecision {
    COPY,
    /** The fast tier holds a version: it is the newer one (user writes land there first). */
    SKIP_FAST_TIER_HAS_IT,
    /** A user delete or an eviction happened after the copy's archive read: the read is stale. */
    SKIP_DELETED_SINCE_READ,
    /** The document was gone from the archive when re-read. */
    SKIP_NOT_IN_ARCHIVE,
    /** The copy took so long that fences written meanwhile may have expired: retry later. */
    SKIP_TOO_SLOW,
    /** The collection was dropped (or is being dropped) since the copy's archive read. */
    SKIP_NAMESPACE_DROPPED;

    /**
     * Whether a drop of the namespace began or ended since the copy read its fences (then the archive),
     * or is under way now: its archive read may hold documents the drop removed. A drop that started
     * longer than {@code maxInFlight} ago and never wrote its end (its proxy died) no longer blocks copies.
     *
     * @param atRead the namespace's drop fence before the archive read (null: none)
     * @param now    the same, in the copy transaction
     */
    public static boolean namespaceDropped(Fence atRead, Fence now, Instant at, Duration maxInFlight) {
        if (now == null) {
            return false;
        }
        if (atRead == null || !atRead.deleteId().equals(now.deleteId())) {
            return true;
        }
        return now.kind() == Fence.Kind.DROP_STARTED && now.at().plus(maxInFlight).isAfter(at);
    }

    /**
     * @param fenceAtRead  the document's fence before the archive was read (null: none)
     * @param fenceNow     its fence now, in the copy transaction (null: none)
     * @param inArchive    whether the archive read returned the document
     * @param inFastTier   whether the fast tier holds the document now, in the copy transaction
     * @param inFlight     time from the fence read to now
     * @param maxInFlight  half the fence retention
     */
    public static CopyUpDecision decide(Fence fenceAtRead, Fence fenceNow, boolean inArchive, boolean inFastTier,
                                        Duration inFlight, Duration maxInFlight) {
        if (!inArchive) {
            return SKIP_NOT_IN_ARCHIVE;
        }
        if (inFastTier) {
            return SKIP_FAST_TIER_HAS_IT;
        }
        if (inFlight.compareTo(maxInFlight) > 0) {
            return SKIP_TOO_SLOW;
        }
        if (fenceNow != null && (fenceAtRead == null || !fenceAtRead.deleteId().equals(fenceNow.deleteId()))) {
            return SKIP_DELETED_SINCE_READ;
        }
        return COPY;
    }
}
