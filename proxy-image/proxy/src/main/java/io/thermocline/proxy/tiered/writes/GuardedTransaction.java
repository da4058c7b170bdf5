package io.thermocline.proxy.tiered.writes;

import com.mongodb.MongoException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/**
 * The one way the write path runs a write itself: attempts of fast-tier transactions until one ends
 * the write. Each attempt first reads what it needs outside the transaction ({@link Attempt#prepare}:
 * the archive, fences, the sync barrier), then runs its {@link Body} in a transaction, a user
 * transaction (not marked as Thermocline's own), so the feeder mirrors it. The attempt starts over
 * when the body finds the documents moved between tiers (it returns null; at most {@value #MAX_STARTS}
 * times, then a retryable error) or when the transaction conflicts with another (a worker's copy or
 * eviction; backing off, at most {@value #MAX_CONFLICTS} times). For a retryable write the reply is
 * recorded in the committing transaction ({@link RetryableReplies}), and a reply another execution
 * recorded ends the write with that reply ({@link Replayed}).
 */
final class GuardedTransaction {

    static final int MAX_STARTS = 8;
    static final int MAX_CONFLICTS = 40;

    /** The part of an attempt outside the transaction; returns what runs inside it. */
    interface Attempt {
        Body prepare() throws InterruptedException;
    }

    /** The part of an attempt inside the transaction: the outcome, or null when the attempt must start over. */
    interface Body {
        Outcome apply(ClientSession session);
    }

    /** What an attempt decided: commit (the write stands) or abort (nothing applied); the client's reply either way. */
    record Outcome(BsonDocument reply, boolean commit) {
        static Outcome committed(BsonDocument reply) {
            return new Outcome(reply, true);
        }

        static Outcome aborted(BsonDocument reply) {
            return new Outcome(reply, false);
        }
    }

    /** A retryable write another execution already committed: its recorded reply, in place of running again. */
    static final class Replayed extends RuntimeException {
        final RawBsonDocument reply;

        Replayed(RawBsonDocument reply) {
            super(null, null, false, false);
            this.reply = reply;
        }
    }

    private final MongoClient fast;
    private final RetryableReplies replies;
    private final WriteConcernWait waits;

    GuardedTransaction(MongoClient fast, RetryableReplies replies) {
        this.fast = fast;
        this.replies = replies;
        this.waits = new WriteConcernWait(fast.getDatabase(MetadataStore.DATABASE));
    }

    /**
     * Runs attempts until one ends the write; returns that attempt's reply.
     *
     * @param recorded   whether the write's reply is recorded for its retries (a retryable write)
     * @param keptMoving what the client is told when the documents never held still
     */
    BsonDocument run(WriteRequest x, boolean recorded, String keptMoving, Attempt attempt) throws InterruptedException {
        int starts = 0;
        int conflicts = 0;
        while (true) {
            Body body = attempt.prepare();
            Ended ended = once(x, recorded, body);
            if (ended.reply().isPresent()) {
                return ended.reply().get();
            }
            if (ended.conflict()) {
                backOff(++conflicts);
            } else if (++starts >= MAX_STARTS) {
                throw new TierLagging(keptMoving);
            }
        }
    }

    /** How one attempt ended: with the write's reply, or without (start over; after a conflict, back off first). */
    private record Ended(Optional<BsonDocument> reply, boolean conflict) {
        static final Ended START_OVER = new Ended(Optional.empty(), false);
        static final Ended CONFLICT = new Ended(Optional.empty(), true);
    }

    private Ended once(WriteRequest x, boolean recorded, Body body) {
        ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
        try {
            session.startTransaction(TransactionOptions.builder()
                    .readConcern(ReadConcern.LOCAL)
                    .writeConcern(ClientWriteConcern.of(x.command()).commit())
                    .build());
            Optional<RawBsonDocument> replay = recorded ? replies.replay(session, x) : Optional.empty();
            if (replay.isPresent()) {
                abortQuietly(session);
                throw new Replayed(replay.get());
            }
            Outcome outcome = body.apply(session);
            if (outcome == null) {
                abortQuietly(session);
                return Ended.START_OVER;
            }
            if (!outcome.commit()) {
                abortQuietly(session);
                return new Ended(Optional.of(outcome.reply()), false);
            }
            if (recorded && !replies.record(session, x, outcome.reply())) {
                abortQuietly(session); // another execution of this write committed first: the next attempt replays it
                return Ended.CONFLICT;
            }
            BsonDocument reply = outcome.reply();
            try {
                Blocking.run(session.commitTransaction());
            } catch (MongoWriteConcernException unmet) {
                // committed, the client's write concern not met: its reply says so, as mongod's does
                reply = ClientWriteConcern.withError(reply, unmet.getWriteConcernError());
            }
            x.fastTier().observed(session.getOperationTime());
            return new Ended(Optional.of(reply), false);
        } catch (MongoException e) {
            abortQuietly(session);
            if (e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                return Ended.CONFLICT;
            }
            throw e;
        } catch (RuntimeException e) {
            abortQuietly(session); // a refusal inside the body (the archive out of service): nothing of it stands
            throw e;
        } finally {
            session.close();
        }
    }

    /**
     * A write conflict with a worker's transaction (warm copy, eviction) clears once it commits: wait a
     * little longer each time; past the bound the client gets a retryable error.
     */
    private static void backOff(int conflicts) {
        if (conflicts >= MAX_CONFLICTS) {
            throw new TierLagging(
                    "the write kept conflicting with Thermocline's own transactions on the fast tier; retry");
        }
        try {
            Thread.sleep(Math.min(200, 5L * conflicts));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TierLagging("interrupted while retrying a write after a conflict");
        }
    }

    /**
     * A write that failed with write errors (nothing of it stands) still waits for the client's write concern
     * on mongod, whose reply then carries both: the same wait, by a write that changes nothing, gives it.
     */
    BsonDocument writeConcernWaited(WriteRequest x, BsonDocument reply) {
        ClientWriteConcern wc = ClientWriteConcern.of(x.command());
        if (wc.equals(ClientWriteConcern.PROXY_DEFAULT)
                || !reply.containsKey("writeErrors")
                || reply.containsKey("writeConcernError")) {
            return reply;
        }
        return waits.after(wc, reply);
    }

    private static void abortQuietly(ClientSession session) {
        if (session.hasActiveTransaction()) {
            try {
                Blocking.run(session.abortTransaction());
            } catch (RuntimeException ignored) {
                // nothing was committed; the server drops the transaction
            }
        }
    }
}
