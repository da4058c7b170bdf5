package io.thermocline.tiering.feeder;

import com.mongodb.client.model.changestream.ChangeStreamDocument;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Subscribes to the change stream with bounded demand and hands the feeder thread batches of at
 * most {@code batchSize} events, waiting at most {@code maxBatchWait} after the first one. Demand
 * is only renewed for events the feeder took, so a slow archive slows the stream instead of
 * filling memory.
 */
final class EventQueue implements Subscriber<ChangeStreamDocument<BsonDocument>>, AutoCloseable {

    private final LinkedBlockingQueue<ChangeStreamDocument<BsonDocument>> queue = new LinkedBlockingQueue<>();
    private final int capacity;
    private volatile Subscription subscription;
    private volatile Throwable failure;
    private volatile boolean completed;

    EventQueue(int batchSize) {
        this.capacity = Math.max(2, batchSize * 2);
    }

    @Override
    public void onSubscribe(Subscription s) {
        subscription = s;
        s.request(capacity);
    }

    @Override
    public void onNext(ChangeStreamDocument<BsonDocument> event) {
        queue.add(event);
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
     * one by one): a batch stays open for them, and is sent as soon as the stream pauses this long.
     */
    static final long BURST_GAP_NANOS = 1_000_000;

    /**
     * The next batch: waits up to {@code idleWait} for a first event, then takes what has arrived
     * and keeps the batch open while more arrive in the same burst, for at most {@code maxBatchWait}.
     * It never holds a batch back to fill it at a steady rate: each event waits for the archive only
     * (events that arrive meanwhile form the next batch). Empty when nothing arrived.
     */
    List<ChangeStreamDocument<BsonDocument>> nextBatch(int batchSize, Duration maxBatchWait, Duration idleWait)
            throws InterruptedException {
        List<ChangeStreamDocument<BsonDocument>> batch = new ArrayList<>();
        ChangeStreamDocument<BsonDocument> first = queue.poll(idleWait.toMillis(), TimeUnit.MILLISECONDS);
        if (first == null) {
            throwIfFailed();
            return batch;
        }
        batch.add(first);
        long deadline = System.nanoTime() + maxBatchWait.toNanos();
        while (batch.size() < batchSize) {
            queue.drainTo(batch, batchSize - batch.size());
            long left = deadline - System.nanoTime();
            if (batch.size() >= batchSize || left <= 0) {
                break;
            }
            ChangeStreamDocument<BsonDocument> next = queue.poll(Math.min(left, BURST_GAP_NANOS), TimeUnit.NANOSECONDS);
            if (next == null) {
                break;
            }
            batch.add(next);
        }
        subscription.request(batch.size());
        return batch;
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
