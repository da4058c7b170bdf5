package io.thermocline.tiering.feeder;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import java.util.Optional;
import java.util.Set;

/**
 * Why the archive takes no mirror write at all right now, read from the error a batch failed with: it does
 * not answer (an outage: no connection, or connected but the write left unanswered past its deadline, a stalled
 * archive), or it answers and refuses every write (a full disk, a read-only volume, a quota).
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

    static Optional<ArchiveTrouble> of(Throwable error) {
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
