package io.thermocline.tiering.feeder;

import com.mongodb.MongoException;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.reactivestreams.client.ChangeStreamPublisher;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.TransactionId;
import io.thermocline.tiering.provenance.OwnTransactions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change stream the feeder reads: deployment scope, {@code $match} on the tiered namespaces and Thermocline's
 * provenance, fence and probe collections, {@code fullDocument: updateLookup}. After a change event over 16 MB
 * failed it, it is reopened lean (without large fields, which {@link LargeEvents} looks up itself) until past
 * that event. It also keeps the own transactions it passes, which the {@link BatchPlanner} leaves unmirrored.
 */
final class TieredChangeStream {

    // the feeder's logger: these are the feeder's events
    private static final Logger LOG = LoggerFactory.getLogger(Feeder.class);

    private final MongoClient fast;
    private final List<CollectionPolicy> policies;
    private final int batchSize;
    private final Duration maxBatchWait;
    private final Duration probeInterval;
    private final String instanceId;

    private volatile EventQueue queue;
    /** Set after a change event over 16 MB failed the stream: stream without large fields until past it. */
    private BsonTimestamp leanThrough;

    private boolean lean;
    private BsonTimestamp lastReceived;
    /** Thermocline's own transactions as the stream passes them (restored with the feeder's position). */
    private OwnTransactions own;

    TieredChangeStream(
            MongoClient fast,
            List<CollectionPolicy> policies,
            int batchSize,
            Duration maxBatchWait,
            Duration probeInterval,
            String instanceId) {
        this.fast = fast;
        this.policies = policies;
        this.batchSize = batchSize;
        this.maxBatchWait = maxBatchWait;
        this.probeInterval = probeInterval;
        this.instanceId = instanceId;
    }

    /**
     * Opens the change stream after {@code resumeToken}, or at {@code startAt} when there is none;
     * {@code openOwn} is the own transaction it may start inside (as the feeder's own transactions were restored).
     */
    void open(BsonDocument resumeToken, BsonTimestamp startAt, TransactionId openOwn) {
        lean = leanThrough != null;
        lastReceived = null;
        List<Bson> pipeline = lean ? LargeEvents.leanPipeline(matchFilter()) : List.of(Aggregates.match(matchFilter()));
        ChangeStreamPublisher<BsonDocument> publisher = fast.watch(pipeline, BsonDocument.class)
                .fullDocument(lean ? FullDocument.DEFAULT : FullDocument.UPDATE_LOOKUP)
                .batchSize(batchSize)
                .maxAwaitTime(probeInterval.toMillis(), TimeUnit.MILLISECONDS);
        publisher = resumeToken != null ? publisher.resumeAfter(resumeToken) : publisher.startAtOperationTime(startAt);
        queue = new EventQueue(batchSize, openOwn);
        publisher.subscribe(queue);
    }

    /**
     * Where the feeder's position is restored (a checkpoint taken over, a resync's): {@code openOwn} is the own
     * transaction that position is inside, if any.
     */
    void restoreOwnTransactions(TransactionId openOwn) {
        own = new OwnTransactions(openOwn);
    }

    OwnTransactions ownTransactions() {
        return own;
    }

    boolean isOpen() {
        return queue != null;
    }

    /** The next batch (empty when none came within the probe interval), large fields looked up while lean. */
    List<ChangeEvent> nextBatch() throws InterruptedException {
        List<ChangeEvent> events = queue.nextBatch(batchSize, maxBatchWait, probeInterval);
        if (events.isEmpty()) {
            return events;
        }
        lastReceived = events.get(events.size() - 1).clusterTime();
        return lean ? LargeEvents.lookUp(fast, events) : events;
    }

    /** When the first event of the last batch reached the feeder ({@link System#nanoTime}; 0 while closed). */
    long batchArrivedNanos() {
        EventQueue current = queue;
        return current == null ? 0 : current.batchArrivedNanos();
    }

    /** Events received and not yet handed out in a batch (0 while closed). */
    int pending() {
        EventQueue current = queue;
        return current == null ? 0 : current.pending();
    }

    /**
     * After {@code error} failed the stream: true when it was an event over 16 MB, and the stream reopens lean
     * until past the last event received (or {@code mirroredThrough}, the checkpoint's).
     */
    boolean goLean(MongoException error, BsonTimestamp mirroredThrough) {
        if (!LargeEvents.tooLarge(error) || lean) {
            return false;
        }
        BsonTimestamp received = lastReceived == null ? mirroredThrough : lastReceived;
        leanThrough = MetadataStore.max(received, mirroredThrough);
        LOG.warn(
                "event=feeder_large_event instance={} after={} error=\"{}\" action=stream_without_large_fields",
                instanceId,
                Feeder.describe(leanThrough),
                error.getMessage());
        return true;
    }

    /** True while lean and past the large event: call {@link #leaveLean} once its batch is checkpointed. */
    boolean pastLargeEvent() {
        return lean && lastReceived != null && lastReceived.compareTo(leanThrough) > 0;
    }

    /** Back to the server's own lookups: the stream closes, to reopen from the checkpoint. */
    void leaveLean() {
        leanThrough = null;
        close();
        LOG.info("event=feeder_large_event_passed instance={}", instanceId);
    }

    void close() {
        if (queue != null) {
            queue.close();
            queue = null;
        }
    }

    private Bson matchFilter() {
        List<Bson> namespaces = new ArrayList<>();
        for (CollectionPolicy policy : policies) {
            namespaces.add(
                    Filters.and(Filters.eq("ns.db", policy.database()), Filters.eq("ns.coll", policy.collection())));
        }
        namespaces.add(
                Filters.and(Filters.eq("ns.db", MetadataStore.DATABASE), Filters.in("ns.coll", MetadataStore.WATCHED)));
        return Filters.or(namespaces);
    }
}
