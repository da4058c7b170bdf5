package io.thermocline.proxy.tiered.changestreams;

import com.mongodb.ClientSessionOptions;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoNamespace;
import com.mongodb.ReadConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The document an {@code update} event's {@code fullDocument: "updateLookup"} gives on one replica set (its current
 * majority-committed version) when the fast tier's own lookup found none: the fast tier no longer holds it. As for a
 * point read that misses the fast tier: a {@code USER_DELETE} fence means the document is deleted (none, as on one
 * replica set); otherwise the archive holds its newest version — at once when no fence names it (every removal leaves
 * one, purged only once the feeder mirrored past it), after the sync barrier when an eviction's does (the feeder may
 * still be mirroring the writes before the eviction).
 */
public final class UpdateLookups {

    private final MongoClient fast;
    private final MongoClient archive;
    private final Fences fences;
    private final MirrorBarrier barrier;
    private final Duration timeout;

    public UpdateLookups(
            MongoClient fast, MongoClient archive, Fences fences, MirrorBarrier barrier, Duration timeout) {
        this.fast = fast;
        this.archive = archive;
        this.fences = fences;
        this.barrier = barrier;
        this.timeout = timeout;
    }

    /**
     * The current version of document {@code id} of {@code namespace}, empty when one replica set's lookup finds none.
     *
     * @throws TierLagging when the archive cannot be shown to hold it within the timeout (the feeder is behind)
     */
    Optional<BsonDocument> current(String namespace, BsonValue id) throws InterruptedException {
        ClientSession session = Blocking.single(fast.startSession(
                        ClientSessionOptions.builder().causallyConsistent(true).build()))
                .orElseThrow();
        Optional<BsonDocument> inFast;
        BsonTimestamp seen;
        BsonDocument clusterTime;
        try {
            inFast = Blocking.single(collection(fast, namespace)
                    .find(session, Filters.eq("_id", id))
                    .first());
            seen = session.getOperationTime();
            clusterTime = session.getClusterTime();
        } finally {
            session.close();
        }
        if (inFast.isPresent()) {
            return inFast; // back in the fast tier since the event was read (a promotion)
        }
        Fence fence;
        try {
            // every fence committed before the fast-tier read, so a removal it saw is known with its kind
            fence = fences.readAfter(seen, clusterTime, timeout, namespace, List.of(id))
                    .get(id);
        } catch (MongoExecutionTimeoutException e) {
            throw new TierLagging(
                    "the fast tier's majority did not reach the change event's lookup within " + timeout + ": retry");
        }
        if (fence != null && fence.kind() == Fence.Kind.USER_DELETE) {
            return Optional.empty();
        }
        if (fence != null && barrier.sync(timeout).isEmpty()) {
            throw new TierLagging(
                    "the feeder did not mirror the fast tier's writes within " + timeout
                            + ", so the archive's version of a document evicted since its change event cannot be trusted yet: retry");
        }
        return Blocking.single(
                collection(archive, namespace).find(Filters.eq("_id", id)).first());
    }

    /** The collection read as updateLookup reads it: majority-committed data. */
    private static MongoCollection<BsonDocument> collection(MongoClient tier, String namespace) {
        MongoNamespace ns = new MongoNamespace(namespace);
        return tier.getDatabase(ns.getDatabaseName())
                .getCollection(ns.getCollectionName(), BsonDocument.class)
                .withReadConcern(ReadConcern.MAJORITY);
    }
}
