package io.thermocline.proxy.tiered.writes;

import io.thermocline.tiering.provenance.Fence;

/**
 * What a delete (or findAndModify {@code remove}) does, inside its transaction, with a target the
 * archive holds and the fast tier does not: decided on the document's fence as read before the
 * archive's second read and as it is now, after the transaction claimed it.
 */
enum ColdTarget {
    /** Delete it by its tombstone alone: the feeder deletes the archive copy. */
    TOMBSTONE,
    /** A user deleted it already (the archive copy is on its way out): nothing to delete, not counted. */
    ALREADY_DELETED,
    /** Evicted since the archive was read: that read may be older than the evicted version. */
    START_OVER;

    /**
     * Whether the namespace's drop fence shows a drop under way, or one since the archive was read: then a cold
     * target is deleted by its tombstone alone, without the copy that puts its delete in the fast tier's change
     * stream (the copy would recreate a collection being dropped).
     */
    static boolean dropMoved(Fence atRead, Fence now) {
        return now != null && (now.kind() == Fence.Kind.DROP_STARTED || atRead == null || !atRead.deleteId().equals(now.deleteId()));
    }

    static ColdTarget of(Fence atRead, Fence now) {
        if (now != null && now.kind() == Fence.Kind.USER_DELETE) {
            return ALREADY_DELETED;
        }
        if (now != null && (atRead == null || !atRead.deleteId().equals(now.deleteId()))) {
            return START_OVER;
        }
        return TOMBSTONE;
    }
}
