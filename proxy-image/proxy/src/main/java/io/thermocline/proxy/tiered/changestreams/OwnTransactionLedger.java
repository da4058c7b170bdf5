package io.thermocline.proxy.tiered.changestreams;

import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.OperationType;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.cache.ExpiringCache;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyMarks;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which fast-tier transactions are Thermocline's own, learned the way the feeder learns it: every
 * own transaction's first statement bumps a marker in {@code thermocline.provenance}, and its change
 * event carries the transaction's {@code lsid} and {@code txnNumber}. The proxy tails the
 * {@code thermocline} database; an application change-stream event of a transaction is Thermocline's
 * own when its marker was seen, and the application's when the ledger has seen past the event's
 * cluster time without one (a probe write moves it past when nothing else is written). It also learns
 * which documents a user-visible transaction copied up ({@link CopyMarks}). An event older than the
 * ledger's start (a stream resumed from before this proxy started) first has the ledger read the
 * {@code thermocline} database's history from that event on ({@link #coverFrom}).
 */
public final class OwnTransactionLedger implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OwnTransactionLedger.class);
    private static final int REMEMBERED = 50_000;

    /**
     * A transaction as its change events identify it: every event of a (single-entry) transaction carries
     * the commit's cluster time and the transaction number. The {@code lsid} is not part of the key: a
     * change stream opened under another session may show it differently.
     */
    private record Key(BsonTimestamp clusterTime, long txnNumber) {}

    private final MongoClient fast;
    private final MirrorBarrier prober;
    private final Duration maxWait;
    /**
     * The oldest marked go first (a lookup does not count as use); no expiry: how far behind a change
     * stream reads is bounded by the oplog, not by the clock (as the feeder's {@code OwnTransactions}).
     */
    private final ExpiringCache<Key, Boolean> own = new ExpiringCache<>(REMEMBERED, Duration.ZERO);

    private final ExpiringCache<Key, CopyMarks.Mark> copies = new ExpiringCache<>(REMEMBERED, Duration.ZERO);
    private volatile BsonTimestamp seenThrough;
    private volatile BsonTimestamp startedAt;
    /** Every marker from here on is known: the start, or as far back as a history read went. */
    private volatile BsonTimestamp coveredFrom;
    /** A history read from here failed: events from here up to {@link #coveredFrom} stay undecided (no read again). */
    private volatile BsonTimestamp unreadableFrom;

    private final Object historyLock = new Object();
    private volatile Subscription subscription;
    private volatile boolean closed;

    public OwnTransactionLedger(MongoClient fast, MirrorBarrier prober, Duration maxWait) {
        this.fast = fast;
        this.prober = prober;
        this.maxWait = maxWait;
    }

    /** Starts tailing (idempotent); returns once the stream is positioned. */
    public synchronized void start() {
        if (startedAt != null) {
            return;
        }
        BsonTimestamp from = prober.probe();
        coveredFrom = from;
        startedAt = from;
        subscribe(from);
    }

    private void subscribe(BsonTimestamp from) {
        fast.watch(List.of(Aggregates.match(Filters.eq("ns.db", MetadataStore.DATABASE))), BsonDocument.class)
                .startAtOperationTime(from)
                .subscribe(new Subscriber<ChangeStreamDocument<BsonDocument>>() {
                    @Override
                    public void onSubscribe(Subscription s) {
                        subscription = s;
                        s.request(Long.MAX_VALUE);
                    }

                    @Override
                    public void onNext(ChangeStreamDocument<BsonDocument> event) {
                        observed(event);
                    }

                    @Override
                    public void onError(Throwable t) {
                        if (!closed) {
                            LOG.warn("event=own_transaction_ledger_restart error={}", t.toString());
                            BsonTimestamp at = seenThrough == null ? startedAt : seenThrough;
                            subscribe(at);
                        }
                    }

                    @Override
                    public void onComplete() {
                        if (!closed) {
                            subscribe(seenThrough == null ? startedAt : seenThrough);
                        }
                    }
                });
    }

    private void observed(ChangeStreamDocument<BsonDocument> event) {
        learn(event);
        BsonTimestamp time = event.getClusterTime();
        synchronized (this) {
            if (time != null && (seenThrough == null || time.compareTo(seenThrough) > 0)) {
                seenThrough = time;
            }
            notifyAll();
        }
    }

    /** What one event of the {@code thermocline} database says about its transaction. */
    private void learn(ChangeStreamDocument<BsonDocument> event) {
        if (event.getLsid() == null || event.getTxnNumber() == null || event.getNamespace() == null) {
            return;
        }
        Key key = new Key(event.getClusterTime(), event.getTxnNumber().getValue());
        String collection = event.getNamespace().getCollectionName();
        if (MetadataStore.PROVENANCE.equals(collection)) {
            own.put(key, Boolean.TRUE);
        } else if (MetadataStore.COPIES.equals(collection) && event.getOperationType() == OperationType.INSERT) {
            CopyMarks.Mark mark = CopyMarks.parse(event.getFullDocument());
            if (mark != null) {
                copies.merge(key, mark, CopyMarks.Mark::merge);
            }
        }
    }

    /**
     * The documents the transaction {@code txnNumber} that wrote an event at {@code clusterTime} copied up
     * ({@link CopyMarks}), or null. Waits (bounded) until the ledger has seen past that cluster time: a
     * transaction may write several marks, and every one of them has its cluster time.
     */
    public CopyMarks.Mark copies(long txnNumber, BsonTimestamp clusterTime) throws InterruptedException {
        if (clusterTime == null || startedAt == null) {
            return null;
        }
        coverFrom(clusterTime);
        if (!awaitSeen(clusterTime, true)) {
            LOG.warn("event=copy_marks_undecided clusterTime={}.{}", clusterTime.getTime(), clusterTime.getInc());
        }
        return copies.get(new Key(clusterTime, txnNumber));
    }

    /**
     * Whether the transaction {@code txnNumber} that wrote an event at {@code clusterTime}
     * is Thermocline's own. Waits (bounded) for the ledger to reach the event; past the bound, or for an
     * event older than the ledger, answers "not own": the application then sees a copy, never loses an event.
     */
    public boolean isOwn(long txnNumber, BsonTimestamp clusterTime) throws InterruptedException {
        Key key = new Key(clusterTime, txnNumber);
        if (known(key)) {
            return true;
        }
        if (clusterTime == null || startedAt == null) {
            return false;
        }
        coverFrom(clusterTime);
        if (known(key)) {
            return true;
        }
        // the marker is the transaction's first write in the thermocline database: seeing its cluster time is enough
        if (!awaitSeen(clusterTime, false)) {
            LOG.warn("event=own_transaction_undecided clusterTime={}.{}", clusterTime.getTime(), clusterTime.getInc());
        }
        return known(key);
    }

    /** Waits (bounded) until the ledger has seen {@code clusterTime} ({@code past}: a later one); whether it did. */
    private boolean awaitSeen(BsonTimestamp clusterTime, boolean past) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        if (!seen(clusterTime, past)) {
            prober.probe(); // a write after the event, so the ledger sees past it even when nothing else is written
        }
        synchronized (this) {
            while (!seen(clusterTime, past)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                wait(Math.max(1, left / 1_000_000));
            }
        }
        return true;
    }

    private boolean seen(BsonTimestamp clusterTime, boolean past) {
        BsonTimestamp through = seenThrough;
        return through != null && (past ? through.compareTo(clusterTime) > 0 : through.compareTo(clusterTime) >= 0);
    }

    /**
     * Reads the {@code thermocline} database's history from {@code clusterTime} up to where the ledger's
     * knowledge starts, once for every earlier point asked: a stream resumed from before this proxy
     * started (on another replica, before a restart) is filtered as one read by a proxy running all along.
     * Bounded by {@link #HISTORY_WAIT}; past it (or once the history is gone) events from that point up to what is covered
     * stay undecided, as before, and the read is not tried again for them (each would hold the stream as long).
     */
    void coverFrom(BsonTimestamp clusterTime) throws InterruptedException {
        if (clusterTime.compareTo(coveredFrom) >= 0 || givenUp(clusterTime)) {
            return;
        }
        synchronized (historyLock) {
            BsonTimestamp until = coveredFrom;
            if (clusterTime.compareTo(until) >= 0 || givenUp(clusterTime)) {
                return;
            }
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
            Subscription[] history = new Subscription[1];
            boolean[] reached = new boolean[1];
            // ends at the first event at or after what is covered: the start's probe is one
            fast.watch(List.of(Aggregates.match(Filters.eq("ns.db", MetadataStore.DATABASE))), BsonDocument.class)
                    .startAtOperationTime(clusterTime)
                    .subscribe(new Subscriber<ChangeStreamDocument<BsonDocument>>() {
                        @Override
                        public void onSubscribe(Subscription s) {
                            history[0] = s;
                            s.request(Long.MAX_VALUE);
                        }

                        @Override
                        public void onNext(ChangeStreamDocument<BsonDocument> event) {
                            if (event.getClusterTime() != null
                                    && event.getClusterTime().compareTo(until) >= 0) {
                                reached[0] = true;
                                done.countDown();
                                return;
                            }
                            learn(event);
                        }

                        @Override
                        public void onError(Throwable t) {
                            LOG.warn("event=own_transaction_history_unreadable error={}", t.toString());
                            done.countDown();
                        }

                        @Override
                        public void onComplete() {
                            done.countDown();
                        }
                    });
            boolean ended = done.await(HISTORY_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            if (history[0] != null) {
                history[0].cancel();
            }
            if (ended && reached[0]) {
                coveredFrom = clusterTime;
            } else {
                unreadableFrom = clusterTime;
                LOG.warn(
                        "event=own_transaction_history_incomplete from={}.{}",
                        clusterTime.getTime(),
                        clusterTime.getInc());
            }
        }
    }

    private boolean givenUp(BsonTimestamp clusterTime) {
        BsonTimestamp from = unreadableFrom;
        return from != null && clusterTime.compareTo(from) >= 0;
    }

    /** How long a read of the ledger's earlier history may take before the stream's events go undecided. */
    private static final Duration HISTORY_WAIT = Duration.ofSeconds(30);

    private boolean known(Key key) {
        return own.contains(key);
    }

    @Override
    public void close() {
        closed = true;
        Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }
}
