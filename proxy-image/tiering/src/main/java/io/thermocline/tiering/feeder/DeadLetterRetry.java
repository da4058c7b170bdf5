package io.thermocline.tiering.feeder;

import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;

/**
 * The feeder's side of dead letters (mirror writes the archive refused for good): a later success of the same
 * document clears its record, the waiting ones are retried every {@code retryInterval} (the cause may have been
 * fixed in the archive), and their count and the oldest are reported ({@link HealthReport}, Prometheus) and told to
 * {@link UnresolvedWrites}, which publishes no mirrored-through past an open one.
 */
final class DeadLetterRetry {

    private final MongoClient fast;
    private final UnresolvedWrites unresolved;
    private final DeadLetters deadLetters;
    private final ArchiveWriter writer;
    private final LeasedCheckpoint lease;
    private final HealthReport health;
    private final FeederMetrics metrics;
    private final Duration retryInterval;

    private volatile long count;
    private long lastRetryNanos;

    DeadLetterRetry(
            MongoClient fast,
            UnresolvedWrites unresolved,
            DeadLetters deadLetters,
            ArchiveWriter writer,
            LeasedCheckpoint lease,
            HealthReport health,
            FeederMetrics metrics,
            Duration retryInterval) {
        this.fast = fast;
        this.unresolved = unresolved;
        this.deadLetters = deadLetters;
        this.writer = writer;
        this.lease = lease;
        this.health = health;
        this.metrics = metrics;
        this.retryInterval = retryInterval;
    }

    /** When the feeder takes the lease: counts what is waiting; the first retry comes an interval later. */
    void opened() {
        count = deadLetters.count();
        lastRetryNanos = System.nanoTime();
        report();
    }

    /** Counts again and reports (after a resync, which may have written the dead-lettered documents). */
    void recount() {
        count = deadLetters.count();
        report();
    }

    boolean retryDue() {
        return count > 0 && System.nanoTime() - lastRetryNanos >= retryInterval.toNanos();
    }

    /**
     * After a batch's writes to {@code namespace}: clears the records of the documents written (when any may
     * exist); true when records were added or cleared ({@link #recount} then).
     */
    boolean changedBy(Namespace namespace, ArchiveWriter.Outcome outcome) {
        long cleared = count + outcome.deadLettered() > 0 ? deadLetters.clear(namespace, outcome.succeeded()) : 0;
        return outcome.deadLettered() > 0 || cleared > 0;
    }

    /**
     * Writes each dead-lettered document's current fast-tier version again; a success clears the
     * record. Runs between batches on the feeder's thread, so every later event of the document is
     * applied after it (as with {@code updateLookup}, the looked-up version is never older than an
     * event already mirrored). A document gone from the fast tier keeps its record until its delete
     * event is mirrored (the evictor never removes a dead-lettered document).
     */
    void retry() {
        lastRetryNanos = System.nanoTime();
        lease.requireLease("dead-letter retry");
        for (DeadLetters.Letter letter : deadLetters.oldest(100)) {
            BsonDocument current = Blocking.single(letter.namespace()
                            .in(fast)
                            .find(Filters.eq("_id", letter.documentId()))
                            .first())
                    .orElse(null);
            if (current == null) {
                continue;
            }
            ArchiveWriter.Outcome outcome = writer.write(
                    letter.namespace(),
                    List.of(new MirrorAction.Upsert(letter.namespace(), letter.documentId(), current)),
                    lease::archiveWriteTimeoutMillis);
            deadLetters.clear(letter.namespace(), outcome.succeeded());
        }
        recount();
    }

    /** Whether a dead letter is open (mirrored-through is held while one is). */
    boolean open() {
        return count > 0;
    }

    private void report() {
        unresolved.deadLetters(count);
        metrics.deadLetters.set(count);
        String oldest = count == 0
                ? null
                : deadLetters.oldest(1).stream()
                        .findFirst()
                        .map(DeadLetters.Letter::summary)
                        .orElse(null);
        health.deadLetters(count, oldest);
    }
}
