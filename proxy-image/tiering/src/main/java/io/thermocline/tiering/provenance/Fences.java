package io.thermocline.tiering.provenance;

import com.mongodb.ClientSessionOptions;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/** Reads and writes {@link Fence}s on the fast tier. */
public final class Fences {

    private final MongoCollection<BsonDocument> fences;
    /** The client {@code store} reads with, for {@link #readAfter}'s sessions; null when built without it. */
    private final MongoClient fastTier;

    public Fences(MetadataStore store) {
        this(null, store);
    }

    /** With the fast-tier client {@code store} was built on: {@link #readAfter} needs it. */
    public Fences(MongoClient fastTier, MetadataStore store) {
        this.fences = store.collection(MetadataStore.FENCES);
        this.fastTier = fastTier;
    }

    /** Writes a fresh fence for a deletion; call it in the same transaction as the delete itself. */
    public Fence write(ClientSession session, String namespace, BsonValue documentId, Fence.Kind kind) {
        Fence fence = new Fence(namespace, documentId, kind, new ObjectId(), Instant.now());
        Blocking.run(fences.replaceOne(
                session,
                Filters.eq("_id", Fence.key(namespace, documentId)),
                fence.toBson(),
                new ReplaceOptions().upsert(true)));
        return fence;
    }

    /**
     * An eviction's fence that also carries the version it removed ({@link #EVICTED}), in the evictor's
     * transaction: the feeder mirrors that version for an earlier update whose lookup finds the document
     * gone ({@link #evictedVersions}), so the evictor need not read the archive while it holds its deletes.
     */
    public Fence writeEviction(ClientSession session, String namespace, BsonDocument evicted) {
        BsonValue documentId = evicted.get("_id");
        Fence fence = new Fence(namespace, documentId, Fence.Kind.EVICTION, new ObjectId(), Instant.now());
        Blocking.run(fences.replaceOne(
                session,
                Filters.eq("_id", Fence.key(namespace, documentId)),
                fence.toBson().append(EVICTED, evicted),
                new ReplaceOptions().upsert(true)));
        return fence;
    }

    /** The field of an eviction fence that holds the evicted version. */
    public static final String EVICTED = "evicted";

    /**
     * The versions the current eviction fences of these documents removed, for a caller that puts them in
     * the archive (the feeder, a resync): only fences that carry a version (not a user delete, not an
     * eviction from before versions were kept), and only evictions after the namespace's last drop: none
     * while a drop is under way, none from before one (the drop removed them from the archive; the drop
     * passes the sync barrier between its start fence and its drop, so evictions before it are mirrored).
     * The drop rule compares the fences' clocks (the evictor's and the proxy's); a drop takes at least a
     * barrier round, far more than the skew between synchronized clocks.
     */
    public Map<BsonValue, BsonDocument> evictedVersions(
            ClientSession session, String namespace, List<BsonValue> documentIds) {
        List<BsonDocument> keys = new ArrayList<>();
        for (BsonValue id : withDropFence(documentIds)) {
            keys.add(Fence.key(namespace, id));
        }
        Map<BsonValue, BsonDocument> versions = new TreeMap<>(BsonOrder.COMPARATOR);
        Map<BsonValue, Instant> evictedAt = new TreeMap<>(BsonOrder.COMPARATOR);
        Fence drop = null;
        var find =
                session == null ? fences.find(Filters.in("_id", keys)) : fences.find(session, Filters.in("_id", keys));
        for (BsonDocument document : Blocking.list(find)) {
            if (Fence.isLeftoverClaim(document)) {
                continue;
            }
            Fence fence = Fence.fromBson(document);
            if (fence.documentId().equals(Fence.namespaceId())) {
                drop = fence;
            } else if (fence.kind() == Fence.Kind.EVICTION && document.isDocument(EVICTED)) {
                versions.put(fence.documentId(), document.getDocument(EVICTED));
                evictedAt.put(fence.documentId(), fence.at());
            }
        }
        if (drop != null && drop.kind() == Fence.Kind.DROP_STARTED) {
            return Map.of();
        }
        if (drop != null) {
            Instant dropped = drop.at();
            versions.keySet().removeIf(id -> !evictedAt.get(id).isAfter(dropped));
        }
        return versions;
    }

    /**
     * A namespace's drop fence ({@link Fence#namespaceId()}), written outside any transaction: a drop
     * writes {@link Fence.Kind#DROP_STARTED} before it drops the archive's collection and
     * {@link Fence.Kind#DROPPED} once the fast tier's is dropped too.
     */
    public Fence writeDrop(String namespace, Fence.Kind kind) {
        Fence fence = new Fence(namespace, Fence.namespaceId(), kind, new ObjectId(), Instant.now());
        Blocking.run(fences.replaceOne(
                Filters.eq("_id", Fence.key(namespace, fence.documentId())),
                fence.toBson(),
                new ReplaceOptions().upsert(true)));
        return fence;
    }

    /** {@code documentIds} and the namespace's drop fence id: what a copy-up reads before and inside its transaction. */
    public static List<BsonValue> withDropFence(List<BsonValue> documentIds) {
        List<BsonValue> ids = new ArrayList<>(documentIds);
        ids.add(Fence.namespaceId());
        return ids;
    }

    /**
     * Claims the fences of documents a copy-up is about to insert, inside the copy's transaction and
     * before it reads their fences: one write on each fence document, so a user delete or an eviction
     * of the same document (which writes that fence) and the copy write one document, and snapshot
     * isolation lets only one of them commit (the other gets WriteConflict and retries, then sees it).
     * Without it the two write different documents and both commit: the copy resurrects the deleted
     * document. An existing fence keeps its kind and deleteId; where none exists the claim leaves none
     * (inserted and removed in the same transaction; the feeder ignores both events).
     */
    public void claim(ClientSession session, String namespace, List<BsonValue> documentIds) {
        if (documentIds.isEmpty()) {
            return;
        }
        BsonObjectId claim = new BsonObjectId(new ObjectId());
        List<BsonDocument> keys = new ArrayList<>();
        List<WriteModel<BsonDocument>> upserts = new ArrayList<>();
        for (BsonValue id : documentIds) {
            BsonDocument key = Fence.key(namespace, id);
            keys.add(key);
            upserts.add(new UpdateOneModel<>(
                    Filters.eq("_id", key),
                    Updates.combine(Updates.set("claim", claim), Updates.setOnInsert("kind", CLAIM)),
                    new UpdateOptions().upsert(true)));
        }
        Blocking.run(fences.bulkWrite(session, upserts, new BulkWriteOptions().ordered(true)));
        Blocking.run(fences.deleteMany(session, Filters.and(Filters.in("_id", keys), Filters.eq("kind", CLAIM))));
    }

    /** The kind a claim gives a fence document it creates: never committed (removed in the claiming transaction). */
    static final String CLAIM = Fence.CLAIM_KIND;

    /**
     * The same claim as commands for a transaction the proxy does not own (a user's, joined statement by
     * statement on the user's session): an update of every fence, then the removal of those it created.
     * Commands of {@link MetadataStore#DATABASE}, without session fields.
     */
    public static List<BsonDocument> claimCommands(String namespace, List<BsonValue> documentIds) {
        BsonObjectId claim = new BsonObjectId(new ObjectId());
        BsonArray updates = new BsonArray();
        BsonArray keys = new BsonArray();
        for (BsonValue id : documentIds) {
            BsonDocument key = Fence.key(namespace, id);
            keys.add(key);
            updates.add(new BsonDocument("q", new BsonDocument("_id", key))
                    .append(
                            "u",
                            new BsonDocument("$set", new BsonDocument("claim", claim))
                                    .append("$setOnInsert", new BsonDocument("kind", new BsonString(CLAIM))))
                    .append("upsert", BsonBoolean.TRUE));
        }
        return List.of(
                new BsonDocument("update", new BsonString(MetadataStore.FENCES))
                        .append("updates", updates)
                        .append("ordered", BsonBoolean.TRUE),
                new BsonDocument("delete", new BsonString(MetadataStore.FENCES))
                        .append(
                                "deletes",
                                new BsonArray(List.of(new BsonDocument(
                                                "q",
                                                new BsonDocument("_id", new BsonDocument("$in", keys))
                                                        .append("kind", new BsonString(CLAIM)))
                                        .append("limit", new BsonInt32(0))))));
    }

    /** A fresh fence as a command (as {@link #write}) for a transaction the proxy does not own. */
    public static BsonDocument writeCommand(String namespace, BsonValue documentId, Fence.Kind kind) {
        Fence fence = new Fence(namespace, documentId, kind, new ObjectId(), Instant.now());
        return new BsonDocument("update", new BsonString(MetadataStore.FENCES))
                .append(
                        "updates",
                        new BsonArray(List.of(
                                new BsonDocument("q", new BsonDocument("_id", Fence.key(namespace, documentId)))
                                        .append("u", fence.toBson())
                                        .append("upsert", BsonBoolean.TRUE))));
    }

    /** A query for the fences of the given documents (as {@link #read}), for a transaction the proxy does not own. */
    public static BsonDocument readCommand(String namespace, List<BsonValue> documentIds) {
        BsonArray keys = new BsonArray();
        for (BsonValue id : documentIds) {
            keys.add(Fence.key(namespace, id));
        }
        return new BsonDocument("find", new BsonString(MetadataStore.FENCES))
                .append("filter", new BsonDocument("_id", new BsonDocument("$in", keys)))
                .append("singleBatch", BsonBoolean.TRUE)
                .append("batchSize", new BsonInt32(Math.max(1, keys.size())));
    }

    /**
     * The current fences of the given documents (absent: never deleted, or fence expired), keyed in
     * MongoDB's order: a fence written for {@code 5.0} is found for {@code 5} (the query matches it so).
     */
    /**
     * As {@link #read}, seeing every fence committed at or before {@code operationTime}, the operationTime of a read
     * of the fast tier's primary: that read may show a removal a majority has not applied yet, whose fence (written
     * in the same transaction) a plain majority read does not see. A causally consistent majority read waits
     * ({@code afterClusterTime}, at most {@code maxWait}) until a majority holds that time.
     *
     * @param clusterTime that read's {@code $clusterTime} (signed where the tier signs it), or null
     * @throws com.mongodb.MongoExecutionTimeoutException when no majority applied it within {@code maxWait}
     */
    public Map<BsonValue, Fence> readAfter(
            BsonTimestamp operationTime,
            BsonDocument clusterTime,
            Duration maxWait,
            String namespace,
            List<BsonValue> documentIds) {
        if (fastTier == null) {
            throw new IllegalStateException("Fences built without the fast-tier client cannot read after a time");
        }
        if (operationTime == null) {
            return read(null, namespace, documentIds); // a tier that reports no time: nothing to order after
        }
        ClientSession session = Blocking.single(fastTier.startSession(
                        ClientSessionOptions.builder().causallyConsistent(true).build()))
                .orElseThrow();
        try {
            if (clusterTime != null && clusterTime.isTimestamp("clusterTime")) {
                session.advanceClusterTime(
                        clusterTime); // a member accepts afterClusterTime only up to the cluster time it heard of
            }
            session.advanceOperationTime(operationTime);
            return find(fences.find(session, Filters.in("_id", keys(namespace, documentIds)))
                    .maxTime(maxWait.toMillis(), TimeUnit.MILLISECONDS));
        } finally {
            session.close();
        }
    }

    public Map<BsonValue, Fence> read(ClientSession session, String namespace, List<BsonValue> documentIds) {
        List<BsonDocument> keys = keys(namespace, documentIds);
        return find(
                session == null ? fences.find(Filters.in("_id", keys)) : fences.find(session, Filters.in("_id", keys)));
    }

    private static List<BsonDocument> keys(String namespace, List<BsonValue> documentIds) {
        List<BsonDocument> keys = new ArrayList<>();
        for (BsonValue id : documentIds) {
            keys.add(Fence.key(namespace, id));
        }
        return keys;
    }

    private static Map<BsonValue, Fence> find(org.reactivestreams.Publisher<BsonDocument> find) {
        Map<BsonValue, Fence> result = new TreeMap<>(BsonOrder.COMPARATOR);
        for (BsonDocument document : Blocking.list(find)) {
            if (Fence.isLeftoverClaim(document)) {
                continue;
            }
            Fence fence = Fence.fromBson(document);
            result.put(fence.documentId(), fence);
        }
        return result;
    }
}
