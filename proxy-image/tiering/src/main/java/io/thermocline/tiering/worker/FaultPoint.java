package io.thermocline.tiering.worker;

/** Places in the workers where a test can stop them as if the process died there. */
public enum FaultPoint {
    /** The archive acknowledged a batch's writes; the checkpoint is not written yet (a batch with nothing to write skips it). */
    FEEDER_ARCHIVE_WRITTEN,
    /** The checkpoint of a batch is written. */
    FEEDER_CHECKPOINTED,
    /** A resync (first start, or lost history) wrote its starting probe; its scan of the fast tier has not begun. */
    FEEDER_RESYNC_STARTED,
    /** A resync (first start, or lost history) wrote the archive; its checkpoint is not written yet. */
    FEEDER_RESYNCED,
    /** The evictor checked a batch and is about to delete it from the fast tier. */
    EVICTOR_BEFORE_DELETE,
    /** A copy-up (the warmer's, a promotion) read its documents' fences; it has not read the archive yet. */
    COPY_UP_FENCES_READ,
    /** A copy-up (the warmer's, a promotion) read a batch from the archive and is about to copy it. */
    WARMER_BEFORE_COPY,
    /** The warmer copied a batch; its checkpoint is not written yet. */
    WARMER_COPIED,
    /** The archive follower read a batch of archive events and announced it; the transaction applying it is not begun. */
    FOLLOWER_BEFORE_APPLY,
    /** The follower committed a batch, before it reads the next one. */
    FOLLOWER_APPLIED,
    /** The archive follower's resync took its fresh stream position; the copy is not begun. */
    FOLLOWER_RESYNC_POSITION_TAKEN,
    /**
     * Any driver call of a worker, before it is sent or after its reply arrived: a test wraps the
     * worker's clients to kill it between any two I/O steps, not only at the named points above.
     */
    BETWEEN_IO_STEPS
}
