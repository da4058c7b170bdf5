package io.thermocline.tiering.feeder;

import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.tiering.metadata.TransactionId;
import io.thermocline.tiering.provenance.OwnTransactions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Subscribes to the change stream with bounded demand and hands the feeder thread batches of at
 * most {@code batchSize} mirrorable events: a small batch as soon as nothing more is queued, a larger one
 * waiting at most {@code maxBatchWait} after the first one while a burst goes on.
 * Demand is only renewed for events the feeder took, so a slow archive slows the stream instead of
 * filling memory.
 *
 * <p>Events of Thermocline's own transactions (promotions, warm copies, evictions: most of the stream
 * under read-through promotion) are never mirrored, so they take no batch slot and no demand slot: they
 * are kept as their stream position only ({@link ChangeEvent#positionOnly}), demand for them is renewed
 * as they arrive (up to {@link #ownPerSlot} per batch slot held at once), and a batch carries up to as many
 * of them besides its mirrorable events. The checkpoint after a batch then passes them with the batch's
 * user events, one archive round trip for both, and a stream of own events alone needs none.
 */
final class EventQueue implements Subscriber<ChangeStreamDocument<BsonDocument>>, AutoCloseable {

    /** Own events a batch (and the queue) may hold per batch slot. */
    static final int OWN_PER_SLOT = 20;

    /** {@code arrivedNanos}: when the driver handed the event over (the start of the feeder's share of its lag). */
    private record Queued(ChangeEvent event, boolean own, boolean prepaid, long arrivedNanos) {}

    private final LinkedBlockingQueue<Queued> queue = new LinkedBlockingQueue<>();
    private final int capacity;
    private final int ownLimit;
    /** Only the driver's {@code onNext} uses it (calls are serialized): the same marks as the planner's, on the same events. */
    private final OwnTransactions own;
    /** Own events queued whose demand was renewed on arrival. */
    private final AtomicInteger prepaidQueued = new AtomicInteger();

    private volatile Subscription subscription;
    private volatile Throwable failure;
    private volatile boolean completed;
    /** When the first event of the last batch handed out arrived (the feeder thread's only). */
    private long batchArrivedNanos;

    /** {@code openOwnTransaction}: the own transaction the stream's resume point is inside, if any. */
    EventQueue(int batchSize, TransactionId openOwnTransaction) {
        this.capacity = Math.max(2, batchSize * 2);
        this.ownLimit = Math.max(1, batchSize) * OWN_PER_SLOT;
        this.own = new OwnTransactions(openOwnTransaction);
    }

    @Override
    public void onSubscribe(Subscription s) {
        subscription = s;
        s.request(capacity);
    }

    @Override
    public void onNext(ChangeStreamDocument<BsonDocument> document) {
        ChangeEvent event = ChangeEvent.of(document);
        if (!BatchPlanner.isOwn(event, own)) {
            queue.add(new Queued(event, false, false, System.nanoTime()));
            return;
        }
        boolean prepaid = prepaidQueued.incrementAndGet() <= ownLimit;
        if (!prepaid) {
            prepaidQueued.decrementAndGet();
        }
        queue.add(new Queued(event.positionOnly(), true, prepaid, System.nanoTime()));
        if (prepaid) {
            subscription.request(1);
        }
    }

    @Override
    public void onError(Throwable error) {
        failure = error;
    }

    @Override
    public void onComplete() {
        completed = true;
    }

    int pending() {
        return queue.size();
    }

    /**
     * Events arriving less than this apart belong to one burst (one getMore's events are handed over
     * one by one): a large batch stays open for them, and is sent as soon as the stream pauses this long.
     */
    static final long BURST_GAP_NANOS = 1_000_000;

    /**
     * A batch of fewer events is sent as soon as nothing more is queued: it waits for no pause. The driver hands
     * a getMore's events over in one loop, so by the time the feeder thread wakes for the first, the rest of a
     * small reply is queued; waiting here only delayed every event of a light stream by
     * at least the gap (and a wake-up of the feeder thread, slow on a loaded machine).
     */
    static final int SMALL_BATCH = 32;

    /**
     * The next batch: waits up to {@code idleWait} for a first event, then takes what has arrived. A small
     * batch goes at once; a larger one stays open while more arrive in the same burst, for at most
     * {@code maxBatchWait}. It never holds a batch back to fill it at a steady rate: each event waits for the
     * archive only (events that arrive meanwhile form the next batch). Empty when nothing arrived. At most
     * {@code batchSize} events to mirror, besides at most {@link #OWN_PER_SLOT} own events per slot.
     */
    List<ChangeEvent> nextBatch(int batchSize, Duration maxBatchWait, Duration idleWait) throws InterruptedException {
        Batch batch = new Batch(batchSize, batchSize * OWN_PER_SLOT);
        Queued first = queue.poll(idleWait.toMillis(), TimeUnit.MILLISECONDS);
        if (first == null) {
            throwIfFailed();
            return batch.events;
        }
        batch.add(first);
        batchArrivedNanos = first.arrivedNanos();
        long deadline = System.nanoTime() + maxBatchWait.toNanos();
        while (!batch.full()) {
            Queued next = queue.poll();
            if (next == null) {
                long left = deadline - System.nanoTime();
                if (batch.events.size() < SMALL_BATCH || left <= 0) {
                    break;
                }
                next = queue.poll(Math.min(left, BURST_GAP_NANOS), TimeUnit.NANOSECONDS);
                if (next == null) {
                    break;
                }
            }
            batch.add(next);
        }
        if (batch.toRequest > 0) {
            subscription.request(batch.toRequest);
        }
        return batch.events;
    }

    /** When the first event of the last batch {@link #nextBatch} handed out reached this queue ({@link System#nanoTime}). */
    long batchArrivedNanos() {
        return batchArrivedNanos;
    }

    private final class Batch {
        final List<ChangeEvent> events = new ArrayList<>();
        final int slots;
        final int ownSlots;
        int mirrorable;
        int ownEvents;
        int toRequest;

        Batch(int slots, int ownSlots) {
            this.slots = slots;
            this.ownSlots = ownSlots;
        }

        void add(Queued queued) {
            events.add(queued.event());
            if (queued.own()) {
                ownEvents++;
            } else {
                mirrorable++;
            }
            if (queued.prepaid()) {
                prepaidQueued.decrementAndGet();
            } else {
                toRequest++;
            }
        }

        boolean full() {
            return mirrorable >= slots || ownEvents >= ownSlots;
        }
    }

    private void throwIfFailed() {
        Throwable error = failure;
        if (error instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (error != null) {
            throw new IllegalStateException("change stream failed", error);
        }
        if (completed) {
            throw new IllegalStateException("change stream ended (invalidated)");
        }
    }

    @Override
    public void close() {
        Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }
}
