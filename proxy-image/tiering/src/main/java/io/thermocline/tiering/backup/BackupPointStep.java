package io.thermocline.tiering.backup;

import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.FeederHealth;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;
import org.bson.BsonTimestamp;

/**
 * One decision of {@code thermocline backup-point}, pure: from what it observed, wait on, done, or refuse. The
 * backup point is reached when the feeder's mirrored-through covers the fast tier's time taken when the command
 * started (every write acknowledged before it is then in the archive) and no dead letter is waiting (a dead letter
 * is a write the archive refused: only the fast tier holds that document, so no archive backup has it).
 */
public sealed interface BackupPointStep {

    /** Not there yet: one line of progress. */
    record Wait(String progress) implements BackupPointStep {
    }

    /** The archive holds every write acknowledged before the target. */
    record Reached(FeederCheckpoint checkpoint) implements BackupPointStep {
    }

    /** No backup point can be given: what is wrong and what the person should do. */
    record Refused(Reason reason, String message) implements BackupPointStep {
    }

    enum Reason { DEAD_LETTERS, ARCHIVE_REFUSES_WRITES, FEEDER_STOPPED, FEEDER_NOT_ADVANCING, TIMED_OUT, RESTORING }

    /**
     * @param target        the fast tier's time when the command started (a probe's operationTime)
     * @param deadLetters   the oldest waiting dead letters (at most a few), read after the checkpoint
     * @param letterCount   how many wait in all
     * @param lastAdvance   when this command last saw mirrored-through move (or its start)
     * @param stoppedAfter  a lease expired this long is a stopped feeder (a successor takes over sooner)
     * @param stallLimit    mirrored-through standing still this long, below the target, is a feeder not advancing
     * @param archiveUnavailable why the feeder finds the archive takes no mirror write now (null while it takes them)
     */
    record Facts(BsonTimestamp target, FeederCheckpoint checkpoint, List<DeadLetters.Letter> deadLetters, long letterCount,
                 Instant now, Instant lastAdvance, Instant deadline, Duration stoppedAfter, Duration stallLimit,
                 FeederHealth.ArchiveUnavailable archiveUnavailable) {
    }

    /** {@link FeederHealth.ArchiveUnavailable#why()} of an archive that answers but refuses writes. */
    String REFUSING_WRITES = "refusing_writes";

    static BackupPointStep decide(Facts f) {
        if (f.letterCount() > 0) {
            return new Refused(Reason.DEAD_LETTERS, f.letterCount() + " dead letter(s): the archive refused the feeder's write of "
                    + "these documents, so only the fast tier holds their current version and no archive backup has it: "
                    + f.deadLetters().stream().map(DeadLetters.Letter::summary).collect(Collectors.joining("; "))
                    + (f.letterCount() > f.deadLetters().size() ? "; ..." : "")
                    + ". Remove the cause in the archive (docs/tiering-workers.md, Dead letters); the feeder's next retry clears"
                    + " them; then run backup-point again");
        }
        FeederCheckpoint c = f.checkpoint();
        if (c.covers(f.target())) {
            return new Reached(c);
        }
        String where = "mirrored through " + BackupPoint.describe(c.mirroredThrough()) + ", target " + BackupPoint.describe(f.target())
                + String.format(", feeder lag %.1f s, %d events pending", c.lagSeconds(), c.pendingEvents());
        FeederHealth.ArchiveUnavailable down = f.archiveUnavailable();
        if (down != null && REFUSING_WRITES.equals(down.why())) {
            // a full disk, a read-only volume, a quota: it does not pass by waiting, and what the fast tier took since is in no backup
            return new Refused(Reason.ARCHIVE_REFUSES_WRITES, "the archive refuses the feeder's writes since " + down.since() + ": "
                    + down.cause() + " (" + where + "); the fast tier keeps the writes and the feeder retries them. Free space or"
                    + " make the archive writable (docs/faults.md), then run backup-point again");
        }
        if (c.owner() == null || c.leaseExpiresAt().plus(f.stoppedAfter()).isBefore(f.now())) {
            return new Refused(Reason.FEEDER_STOPPED, "the feeder is stopped: " + (c.owner() == null ? "no feeder has ever held its lease"
                    : "the lease of " + c.owner() + " expired at " + c.leaseExpiresAt()) + " (" + where + "). Start the feeder"
                    + " (thermocline feeder, or check the NAME-feeder Deployment and its logs) and run backup-point again");
        }
        if (!f.lastAdvance().plus(f.stallLimit()).isAfter(f.now())) {
            return new Refused(Reason.FEEDER_NOT_ADVANCING, "the feeder is not advancing: mirrored-through has not moved for "
                    + Duration.between(f.lastAdvance(), f.now()).toSeconds() + " s (" + where + ")"
                    + (down == null ? "" : "; the feeder finds the archive " + down.why() + " since " + down.since() + ": " + down.cause())
                    + ". Check the archive's health and the feeder's logs (event=feeder_*); the backup point needs it to mirror what"
                    + " the fast tier acknowledged");
        }
        if (!f.now().isBefore(f.deadline())) {
            return new Refused(Reason.TIMED_OUT, "timed out: the feeder is advancing but has not mirrored everything acknowledged"
                    + " before the command started (" + where + "). Run again with a longer --timeout");
        }
        return new Wait("waiting for the feeder: " + where);
    }
}
