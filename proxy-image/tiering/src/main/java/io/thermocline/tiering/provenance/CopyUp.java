package io.thermocline.tiering.provenance;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoWriteException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Copies documents from the archive into the fast tier without ever resurrecting a deleted one
 * or overwriting a newer version (architecture, "Provenance and copy-up rules"):
 * <ol>
 * <li>read the documents' fences on the fast tier;</li>
 * <li>wait until the feeder has mirrored every fast-tier write up to now ({@link MirrorBarrier}),
 *     so the archive already reflects every delete older than those fences;</li>
 * <li>read the documents from the archive;</li>
 * <li>in one marked transaction on the fast tier: claim the fences of the documents to copy
 *     ({@link Fences#claim}: a concurrent delete or eviction then conflicts with the copy), and copy a
 *     document only if the fast tier holds no version and its fence did not change since step 1
 *     ({@link CopyUpDecision}).</li>
 * </ol>
 * Used by the warmer and, for a point read that missed the fast tier, by the proxy's promotion.
 */
public final class CopyUp {

    private final MongoClient fast;
    private final MongoClient archive;
    private final Fences fences;
    private final OwnWrites ownWrites;
    private final MirrorBarrier barrier;
    private final Duration barrierTimeout;
    private final Duration maxInFlight;
    private final FaultInjection faults;

    public CopyUp(MongoClient fast, MongoClient archive, MetadataStore store, OwnWrites ownWrites, MirrorBarrier barrier,
                  Duration barrierTimeout, Duration fenceRetention, FaultInjection faults) {
        this.fast = fast;
        this.archive = archive;
        this.fences = new Fences(store);
        this.ownWrites = ownWrites;
        this.barrier = barrier;
        this.barrierTimeout = barrierTimeout;
        this.maxInFlight = fenceRetention.dividedBy(2);
        this.faults = faults;
    }

    /** What happened to each document of one copy. {@code feederBehind}: nothing was tried. */
    public record Result(Map<CopyUpDecision, Integer> counts, boolean feederBehind) {
        public int count(CopyUpDecision decision) {
            return counts.getOrDefault(decision, 0);
        }

        public int copied() {
            return count(CopyUpDecision.COPY);
        }
    }

    public Result copy(String namespace, List<BsonValue> documentIds) throws InterruptedException {
        if (documentIds.isEmpty()) {
            return new Result(Map.of(), false);
        }
        long started = System.nanoTime();
        Map<BsonValue, Fence> fencesAtRead = fences.read(null, namespace, Fences.withDropFence(documentIds));
        if (barrier.sync(barrierTimeout).isEmpty()) {
            return new Result(Map.of(), true);
        }
        Map<BsonValue, BsonDocument> archived = new HashMap<>();
        for (BsonDocument document : Blocking.list(collection(archive, namespace).find(Filters.in("_id", documentIds)))) {
            archived.put(document.get("_id"), document);
        }
        faults.reached(FaultPoint.WARMER_BEFORE_COPY);
        for (int attempt = 1; ; attempt++) {
            try {
                return new Result(copyInTransaction(namespace, documentIds, fencesAtRead, archived, started), false);
            } catch (MongoWriteException | MongoBulkWriteException e) {
                // a user inserted one of them after our check: decide again, the insert now sees it
                if (attempt >= 5 || !duplicateKey(e)) {
                    throw e;
                }
            }
        }
    }

    private Map<CopyUpDecision, Integer> copyInTransaction(String namespace, List<BsonValue> documentIds,
                                                            Map<BsonValue, Fence> fencesAtRead,
                                                            Map<BsonValue, BsonDocument> archived, long started) {
        MongoCollection<BsonDocument> target = collection(fast, namespace);
        return ownWrites.inTransaction(session -> {
            Set<BsonValue> present = new HashSet<>();
            for (BsonDocument held : Blocking.list(target.find(session, Filters.in("_id", documentIds)).projection(Projections.include("_id")))) {
                present.add(held.get("_id"));
            }
            List<BsonValue> candidates = new ArrayList<>();
            for (BsonValue id : documentIds) {
                if (archived.containsKey(id) && !present.contains(id)) {
                    candidates.add(id);
                }
            }
            // claim before reading: a delete committed before the claim is seen below, a later one conflicts
            fences.claim(session, namespace, candidates);
            Map<BsonValue, Fence> fencesNow = fences.read(session, namespace, Fences.withDropFence(documentIds));
            Duration inFlight = Duration.ofNanos(System.nanoTime() - started);
            Map<CopyUpDecision, Integer> counts = new EnumMap<>(CopyUpDecision.class);
            if (CopyUpDecision.namespaceDropped(fencesAtRead.get(Fence.namespaceId()), fencesNow.get(Fence.namespaceId()),
                    Instant.now(), maxInFlight)) {
                counts.put(CopyUpDecision.SKIP_NAMESPACE_DROPPED, documentIds.size());
                return counts;
            }
            List<BsonDocument> copies = new ArrayList<>();
            for (BsonValue id : documentIds) {
                CopyUpDecision decision = CopyUpDecision.decide(fencesAtRead.get(id), fencesNow.get(id),
                        archived.containsKey(id), present.contains(id), inFlight, maxInFlight);
                counts.merge(decision, 1, Integer::sum);
                if (decision == CopyUpDecision.COPY) {
                    copies.add(archived.get(id));
                }
            }
            if (!copies.isEmpty()) {
                Blocking.run(target.insertMany(session, copies, new InsertManyOptions().ordered(true)));
            }
            return counts;
        });
    }

    private static boolean duplicateKey(RuntimeException e) {
        if (e instanceof MongoWriteException write) {
            return write.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
        }
        return ((MongoBulkWriteException) e).getWriteErrors().stream()
                .anyMatch(error -> ErrorCategory.fromErrorCode(error.getCode()) == ErrorCategory.DUPLICATE_KEY);
    }

    static MongoCollection<BsonDocument> collection(MongoClient client, String namespace) {
        MongoNamespace ns = new MongoNamespace(namespace);
        return client.getDatabase(ns.getDatabaseName()).getCollection(ns.getCollectionName(), BsonDocument.class);
    }
}
