package io.thermocline.tiering.evictor;

import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDocument;

/** Whether the evictor may delete one fast-tier document now (pure; unit-tested with a table). */
public enum Eligibility {
    EVICT,
    /** Its age is not before the cutoff. */
    INSIDE_WINDOW,
    /** Its age field is missing or of another type: never evicted. */
    NO_AGE,
    /** The feeder has not yet mirrored every write up to the evictor's read: wait. */
    FEEDER_BEHIND,
    /** The feeder could not write its last state to the archive (a dead letter): the fast tier holds the only copy. */
    DEAD_LETTERED,
    /** Verification found no archive copy: keep, the archive would lose it. */
    NOT_IN_ARCHIVE,
    /** Verification found a different archive copy: keep and report. */
    ARCHIVE_DIFFERS;

    /**
     * @param age             the document's age
     * @param cutoff          documents aged strictly before it are outside the window
     * @param mirroredCovers  the feeder's persisted mirrored-through covers a probe written after
     *                        the document was read, so every write to it is in the archive
     * @param deadLettered    the archive refused a mirror write of it (read after the barrier, so a
     *                        refusal of any write up to the evictor's read is seen)
     * @param fastCopy        the document as read from the fast tier
     * @param archiveCopy     the archive's copy; ignored unless {@code verify}
     */
    public static Eligibility decide(Optional<Instant> age, Instant cutoff, boolean mirroredCovers, boolean verify,
                                     boolean deadLettered, BsonDocument fastCopy, BsonDocument archiveCopy) {
        if (age.isEmpty()) {
            return NO_AGE;
        }
        if (!age.get().isBefore(cutoff)) {
            return INSIDE_WINDOW;
        }
        if (!mirroredCovers) {
            return FEEDER_BEHIND;
        }
        if (deadLettered) {
            return DEAD_LETTERED;
        }
        if (verify) {
            if (archiveCopy == null) {
                return NOT_IN_ARCHIVE;
            }
            if (!archiveCopy.equals(fastCopy)) {
                return ARCHIVE_DIFFERS;
            }
        }
        return EVICT;
    }
}
