package io.thermocline.tiering.feeder;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.bulk.WriteConcernError;
import java.util.Optional;
import java.util.Set;

/**
 * Why the archive takes no mirror write at all right now, read from the error a batch failed with: it does
 * not answer (an outage: no connection, or connected but the write left unanswered past its deadline, a stalled
 * archive, or one whose members do not confirm the write on a majority in time), or it answers and refuses every
 * write (a full disk, a read-only volume, a quota, a write concern it cannot satisfy).
 * Either way the batch is retried from the checkpoint until the archive takes it: nothing is dead-lettered
 * and nothing is lost, the fast tier holds it meanwhile (docs/faults.md). Any other error is not trouble of
 * the whole archive.
 */
record ArchiveTrouble(Kind kind, String cause) {

    enum Kind {
        UNREACHABLE("unreachable"),
        STALLED("stalled"),
        REFUSING_WRITES("refusing_writes");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** OutOfDiskSpace, and Atlas's "over your space quota" (AtlasError). */
    private static final Set<Integer> REFUSALS = Set.of(14031, 8000);

    /** MaxTimeMSExpired: the archive took the write and did not finish it within the deadline the driver sent. */
    private static final int MAX_TIME_EXPIRED = 50;

    /** WriteConcernFailed (wtimeout) and MaxTimeMSExpired: applied on the primary, not confirmed by a majority in time. */
    private static final Set<Integer> UNCONFIRMED = Set.of(64, MAX_TIME_EXPIRED);

    /** UnsatisfiableWriteConcern, UnknownReplWriteConcern: the archive's configuration can never confirm the write. */
    private static final Set<Integer> UNSATISFIABLE = Set.of(100, 79);

    static Optional<ArchiveTrouble> of(Throwable error) {
        // a write concern error first: the write was applied on the archive's primary, which then could not have it
        // confirmed (its secondaries down or far behind, or a replica-set configuration that never can); a stepdown's
        // write concern error is an election, retried like "not primary"
        for (Throwable e = error; e != null; e = e.getCause()) {
            WriteConcernError concern = e instanceof MongoBulkWriteException b
                    ? b.getWriteConcernError()
                    : e instanceof MongoWriteConcernException w ? w.getWriteConcernError() : null;
            if (concern == null) {
                continue;
            }
            String what = "(writeConcernError " + concern.getCode() + " " + concern.getCodeName() + ": "
                    + concern.getMessage() + ")";
            if (UNCONFIRMED.contains(concern.getCode())) {
                return Optional.of(new ArchiveTrouble(
                        Kind.STALLED,
                        "the archive's members did not confirm the write on a majority in time " + what
                                + "; are its secondaries down or far behind?"));
            }
            if (UNSATISFIABLE.contains(concern.getCode())) {
                return Optional.of(new ArchiveTrouble(
                        Kind.REFUSING_WRITES,
                        "the archive cannot satisfy the feeder's write concern " + what
                                + "; check its replica-set configuration"));
            }
        }
        // stalled first: the driver wraps a connected archive's silence (a read timeout) in a MongoTimeoutException too
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof MongoSocketReadTimeoutException
                    || (e instanceof MongoException m && m.getCode() == MAX_TIME_EXPIRED)) {
                return Optional.of(new ArchiveTrouble(Kind.STALLED, String.valueOf(error.getMessage())));
            }
        }
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof MongoTimeoutException || e instanceof MongoSocketException) {
                return Optional.of(new ArchiveTrouble(Kind.UNREACHABLE, e.getMessage()));
            }
            String message = String.valueOf(e.getMessage());
            if (e instanceof MongoException m
                    && (REFUSALS.contains(m.getCode())
                            || message.contains("No space left on device")
                            || message.contains("disk full")
                            || message.contains("read-only")
                            || message.contains("space quota"))) {
                return Optional.of(new ArchiveTrouble(Kind.REFUSING_WRITES, message));
            }
        }
        return Optional.empty();
    }
}
