package io.thermocline.tiering.backup;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.mode.ModeController;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import org.bson.BsonTimestamp;

/**
 * The backup point: waits until the archive holds every write the fast tier acknowledged before {@link #await}
 * was called, then returns the archive's time read after that. Any archive backup whose consistency point is at or
 * after that time (a snapshot taken after it, a PITR restore to it or later) holds all those writes.
 *
 * <p>Why the archive time is enough: the feeder checkpoints mirrored-through only after the archive acknowledged,
 * with majority, every write it covers; the checkpoint was read covering the target before the archive was asked
 * for its time, so every one of those writes precedes that time in the archive's oplog.
 */
public final class BackupPoint {

    /** What the command prints: the archive time, and the fast-tier time it covers. */
    public record Point(BsonTimestamp archiveTime, BsonTimestamp fastTierTime, FeederCheckpoint checkpoint, boolean archiveAuthoritative) {
    }

    /** The command could not give a backup point. */
    public static final class Refusal extends Exception {
        private final BackupPointStep.Reason reason;

        Refusal(BackupPointStep.Reason reason, String message) {
            super(message);
            this.reason = reason;
        }

        public BackupPointStep.Reason reason() {
            return reason;
        }
    }

    static final Duration POLL = Duration.ofMillis(100);
    static final Duration STOPPED_AFTER = Duration.ofSeconds(15);

    private final MongoClient archive;
    private final MetadataStore store;
    private final MirrorBarrier barrier;
    private final Clock clock;

    public BackupPoint(MongoClient fast, MongoClient archive, String instance, Clock clock) {
        this.archive = archive;
        this.store = new MetadataStore(fast);
        this.barrier = new MirrorBarrier(fast, store, "backup-point/" + instance);
        this.clock = clock;
    }

    /**
     * @param progress   receives a line about every {@code every} while waiting
     * @param stallLimit mirrored-through standing still this long is refused as a feeder not advancing
     */
    public Point await(Duration timeout, Duration stallLimit, Duration every, Consumer<String> progress) throws Refusal, InterruptedException {
        ModeDocument mode = new ModeStore(store).read();
        if (mode.phase() == Phase.RESTORING) {
            throw new Refusal(BackupPointStep.Reason.RESTORING, "the fleet is held for a restore of the archive (phase Restoring):"
                    + " finish it (thermocline restore-sync) or give it up (thermocline restore-sync --cancel) first");
        }
        // the probe is a write: its time follows every write committed before it, and the feeder sees it even when idle
        BsonTimestamp target = barrier.probe();
        if (mode.exists() && mode.phase().archiveAuthoritative()) {
            // the archive takes every write and the drain (or the start in shadow) proved nothing is left in the fast tier;
            // only dead letters could still hold a document the archive lacks
            FeederCheckpoint nothingLeft = new FeederCheckpoint(null, target, null, 0, 0, 0, "archive", clock.instant(), 0);
            check(target, nothingLeft, clock.instant(), clock.instant().plus(timeout), stallLimit, clock.instant());
            return new Point(ModeController.archiveTime(archive), target, store.feederCheckpoint(), true);
        }
        Instant start = clock.instant();
        Instant deadline = start.plus(timeout);
        Instant lastAdvance = start;
        Instant lastReport = start;
        BsonTimestamp seen = null;
        while (true) {
            FeederCheckpoint c = store.feederCheckpoint();
            Instant now = clock.instant();
            if (seen == null || c.mirroredThrough().compareTo(seen) > 0) {
                seen = c.mirroredThrough();
                lastAdvance = now;
            }
            BackupPointStep step = check(target, c, now, deadline, stallLimit, lastAdvance);
            if (step instanceof BackupPointStep.Reached reached) {
                return new Point(ModeController.archiveTime(archive), target, reached.checkpoint(), false);
            }
            if (step instanceof BackupPointStep.Wait wait && !now.isBefore(lastReport.plus(every))) {
                progress.accept(wait.progress());
                lastReport = now;
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    private BackupPointStep check(BsonTimestamp target, FeederCheckpoint c, Instant now, Instant deadline, Duration stallLimit,
                                  Instant lastAdvance) throws Refusal {
        DeadLetters letters = new DeadLetters(store);
        // read after the checkpoint: the feeder records a refusal before it checkpoints past the event
        long count = letters.count();
        BackupPointStep step = BackupPointStep.decide(new BackupPointStep.Facts(target, c, count == 0 ? List.of() : letters.oldest(5),
                count, now, lastAdvance, deadline, STOPPED_AFTER, stallLimit, store.feederHealth().archiveUnavailable()));
        if (step instanceof BackupPointStep.Refused refused) {
            throw new Refusal(refused.reason(), refused.message());
        }
        return step;
    }

    static String describe(BsonTimestamp t) {
        return t == null ? "nothing" : Instant.ofEpochSecond(t.getTime() & 0xFFFFFFFFL) + " (" + (t.getTime() & 0xFFFFFFFFL) + "." + t.getInc() + ")";
    }
}
