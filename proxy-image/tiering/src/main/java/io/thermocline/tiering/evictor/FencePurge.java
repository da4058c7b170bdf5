package io.thermocline.tiering.evictor;

import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonValue;

/**
 * Drops fences past their retention, never one still needed:
 * <ul>
 * <li>any fence younger than the retention: a copy-up in flight may still compare with it (copy-ups
 *     give up after half the retention);</li>
 * <li>a fence whose deletion the feeder has not mirrored through: a probe written after the fences were
 *     read must be mirrored first; when the feeder is behind, they stay. A user-delete fence is what
 *     tells the proxy (and a resync) that the archive copy it still holds is deleted. An eviction fence
 *     is what keeps a point read that misses the fast tier waiting at the read barrier until every
 *     write before the eviction is mirrored (an eviction can remove a version whose earlier writes,
 *     a delete and a re-insert of the same content, are still on their way); without any fence the
 *     read skips the barrier (the proxy's {@code PointReadSkip});</li>
 * <li>a fence rewritten since it was read (a newer delete of the same document): the delete is
 *     conditional on its {@code deleteId}.</li>
 * </ul>
 */
final class FencePurge {

    /** Fences examined per pass: a backlog is worked off over several passes. */
    static final int BATCH = 10_000;

    record Result(long purged, long keptForFeeder) {
    }

    private final MongoCollection<BsonDocument> fences;
    private final MirrorBarrier barrier;
    private final Duration barrierTimeout;

    FencePurge(MetadataStore store, MirrorBarrier barrier, Duration barrierTimeout) {
        this.fences = store.collection(MetadataStore.FENCES);
        this.barrier = barrier;
        this.barrierTimeout = barrierTimeout;
    }

    /**
     * Removes claim placeholders left committed (see {@link Fence#isLeftoverClaim}): they stand for no deletion. A claim
     * in flight is not committed, so this never sees it; one committing meanwhile removed its own.
     */
    long removeLeftoverClaims() {
        return Blocking.single(fences.deleteMany(Filters.eq("kind", Fence.CLAIM_KIND))).orElseThrow().getDeletedCount();
    }

    /** The fences by kind, for the {@code thermocline_fences} gauge. */
    Map<String, Long> countByKind() {
        Map<String, Long> counts = new TreeMap<>();
        for (BsonDocument group : Blocking.list(fences.aggregate(List.of(Aggregates.group("$kind", Accumulators.sum("n", 1)))))) {
            BsonValue kind = group.get("_id");
            counts.put(kind != null && kind.isString() ? kind.asString().getValue() : String.valueOf(kind), group.getNumber("n").longValue());
        }
        return counts;
    }

    Result purge(Instant olderThan) throws InterruptedException {
        List<Fence> expired = new ArrayList<>();
        for (BsonDocument document : Blocking.list(fences.find(Filters.lt("at", new Date(olderThan.toEpochMilli()))).limit(BATCH))) {
            expired.add(Fence.fromBson(document));
        }
        if (expired.isEmpty()) {
            return new Result(0, 0);
        }
        if (barrier.sync(barrierTimeout).isEmpty()) {
            return new Result(0, expired.size());
        }
        List<WriteModel<BsonDocument>> deletes = new ArrayList<>();
        for (Fence fence : expired) {
            deletes.add(new DeleteOneModel<>(Filters.and(Filters.eq("_id", Fence.key(fence.namespace(), fence.documentId())),
                    Filters.eq("deleteId", new BsonObjectId(fence.deleteId())))));
        }
        return new Result(Blocking.single(fences.bulkWrite(deletes)).orElseThrow().getDeletedCount(), 0);
    }
}
