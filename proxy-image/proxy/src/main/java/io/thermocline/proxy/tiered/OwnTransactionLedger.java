package io.thermocline.proxy.tiered;

import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.cache.ExpiringCache;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
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
 * cluster time without one (a probe write moves it past when nothing else is written).
 */
public final class OwnTransactionLedger implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OwnTransactionLedger.class);
    private static final int REMEMBERED = 50_000;

    /**
     * A transaction as its change events identify it: every event of a (single-entry) transaction carries
     * the commit's cluster time and the transaction number. The {@code lsid} is not part of the key: a
     * change stream opened under another session may show it differently.
     */
    private record Key(BsonTimestamp clusterTime, long txnNumber) {
    }

    private final MongoClient fast;
    private final MirrorBarrier prober;
    private final Duration maxWait;
    /**
     * The oldest marked go first (a lookup does not count as use); no expiry: how far behind a change
     * stream reads is bounded by the oplog, not by the clock (as the feeder's {@code OwnTransactions}).
     */
    private final ExpiringCache<Key, Boolean> own = new ExpiringCache<>(REMEMBERED, Duration.ZERO);
    private volatile BsonTimestamp seenThrough;
    private volatile BsonTimestamp startedAt;
    private volatile Subscription subscription;
    private volatile boolean closed;

    OwnTransactionLedger(MongoClient fast, MirrorBarrier prober, Duration maxWait) {
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
        BsonDocument lsid = event.getLsid();
        if (lsid != null && event.getTxnNumber() != null && event.getNamespace() != null
                && MetadataStore.PROVENANCE.equals(event.getNamespace().getCollectionName())) {
            own.put(new Key(event.getClusterTime(), event.getTxnNumber().getValue()), Boolean.TRUE);
        }
        BsonTimestamp time = event.getClusterTime();
        synchronized (this) {
            if (time != null && (seenThrough == null || time.compareTo(seenThrough) > 0)) {
                seenThrough = time;
            }
            notifyAll();
        }
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
        if (clusterTime == null || startedAt == null || clusterTime.compareTo(startedAt) < 0) {
            return false;
        }
        long deadline = System.nanoTime() + maxWait.toNanos();
        if (seenThrough == null || seenThrough.compareTo(clusterTime) < 0) {
            prober.probe(); // a write after the event, so the ledger sees past it even when nothing else is written
        }
        synchronized (this) {
            while (seenThrough == null || seenThrough.compareTo(clusterTime) < 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warn("event=own_transaction_undecided clusterTime={}.{}", clusterTime.getTime(), clusterTime.getInc());
                    return known(key);
                }
                wait(Math.max(1, left / 1_000_000));
            }
        }
        return known(key);
    }

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
