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
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Copies documents from the archive into the fast tier without ever resurrecting a deleted one
 * or overwriting a newer version (architecture, "Provenance and copy-up rules"):
 * <ol>
 * <li>read the documents' fences on the fast tier;</li>
 * <li>for the documents a fence names (or all, while the namespace has a drop fence): wait until the
 *     feeder has mirrored every fast-tier write up to now ({@link MirrorBarrier}), so the archive already
 *     reflects every delete older than those fences. The others skip it: the fence of their last removal
 *     was purged only after the feeder mirrored through it, so the archive already holds their latest
 *     versions (docs/consistency.md, "Copy-ups that skip the barrier");</li>
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
    private final LongAdder skipped = new LongAdder();
    private final LongAdder waited = new LongAdder();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder left = new LongAdder();

    /** What a copy does with the documents a fence names (or all of them, while the namespace has a drop fence). */
    public enum Fenced {
        /** Copies them after the sync barrier (the warmer, write-through promotion). */
        WAIT,
        /**
         * Leaves them out (read-through promotion): its rounds run one after another, and one waiting for a
         * lagging feeder holds back every unfenced promotion behind it.
         */
        LEAVE
    }

    /**
     * How copies passed the sync barrier so far, per copy (a copy with both kinds counts in both):
     * {@code skipped}, unfenced documents copied without it; {@code waited}, fenced ones after it;
     * {@code timedOut}, fenced ones not copied because the feeder was behind; {@code left}, fenced ones a
     * {@link Fenced#LEAVE} copy left out.
     */
    public record BarrierCounts(long skipped, long waited, long timedOut, long left) {
    }

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

    /**
     * What happened to each document of one copy. {@code feederBehind}: the fenced documents were not
     * tried (the feeder did not reach the barrier in time); {@code fencedLeft}: fenced documents not tried
     * (for that reason, or left out by {@link Fenced#LEAVE}). The unfenced ones are in {@code counts}.
     */
    public record Result(Map<CopyUpDecision, Integer> counts, boolean feederBehind, int fencedLeft) {
        public int count(CopyUpDecision decision) {
            return counts.getOrDefault(decision, 0);
        }

        public int copied() {
            return count(CopyUpDecision.COPY);
        }
    }

    public BarrierCounts barrierCounts() {
        return new BarrierCounts(skipped.sum(), waited.sum(), timedOut.sum(), left.sum());
    }

    /** Copies {@code documentIds}, the fenced ones after the sync barrier. */
    public Result copy(String namespace, List<BsonValue> documentIds) throws InterruptedException {
        return copy(namespace, documentIds, Fenced.WAIT);
    }

    public Result copy(String namespace, List<BsonValue> documentIds, Fenced fenced) throws InterruptedException {
        if (documentIds.isEmpty()) {
            return new Result(Map.of(), false, 0);
        }
        long started = System.nanoTime();
        Map<BsonValue, Fence> fencesAtRead = fences.read(null, namespace, Fences.withDropFence(documentIds));
        faults.reached(FaultPoint.COPY_UP_FENCES_READ);
        boolean dropFenced = fencesAtRead.containsKey(Fence.namespaceId());
        List<BsonValue> unfenced = new ArrayList<>();
        List<BsonValue> waiting = new ArrayList<>();
        for (BsonValue id : documentIds) {
            (dropFenced || fencesAtRead.containsKey(id) ? waiting : unfenced).add(id);
        }
        Map<CopyUpDecision, Integer> counts = new EnumMap<>(CopyUpDecision.class);
        if (!unfenced.isEmpty()) {
            // no fence names them: the archive already holds their latest versions (docs/consistency.md,
            // "Copy-ups that skip the barrier"); a removal since the fence read leaves a fence the transaction sees
            skipped.increment();
            readAndCopy(namespace, unfenced, fencesAtRead, started).forEach((d, n) -> counts.merge(d, n, Integer::sum));
        }
        if (waiting.isEmpty()) {
            return new Result(counts, false, 0);
        }
        if (fenced == Fenced.LEAVE) {
            left.increment();
            return new Result(counts, false, waiting.size());
        }
        if (barrier.sync(barrierTimeout).isEmpty()) {
            timedOut.increment();
            return new Result(counts, true, waiting.size());
        }
        waited.increment();
        readAndCopy(namespace, waiting, fencesAtRead, started).forEach((d, n) -> counts.merge(d, n, Integer::sum));
        return new Result(counts, false, 0);
    }

    /**
     * Copies documents the caller read from the archive itself (a point read's answer), without reading them
     * again: the caller read, at {@code fencesRead} ({@link System#nanoTime}) and before the archive read, that no
     * fence names them and that the namespace has no drop fence: the unfenced case of {@link #copy}, whose
     * archive read it already made. Every document must be whole (no projection).
     */
    public Result copyRead(String namespace, List<BsonDocument> documents, long fencesRead) {
        if (documents.isEmpty()) {
            return new Result(Map.of(), false, 0);
        }
        Map<BsonValue, BsonDocument> archived = new TreeMap<>(BsonOrder.COMPARATOR);
        documents.forEach(d -> archived.put(d.get("_id"), d));
        skipped.increment();
        // no fence at the caller's read: compared with none in the transaction (a drop fence there stops every copy)
        return new Result(copyRetrying(namespace, List.copyOf(archived.keySet()), Map.of(), archived, fencesRead), false, 0);
    }

    /** Reads {@code documentIds} from the archive and copies them in a transaction that compares their fences with {@code fencesAtRead}. */
    private Map<CopyUpDecision, Integer> readAndCopy(String namespace, List<BsonValue> documentIds,
                                                     Map<BsonValue, Fence> fencesAtRead, long started) {
        Map<BsonValue, BsonDocument> archived = new TreeMap<>(BsonOrder.COMPARATOR);
        for (BsonDocument document : Blocking.list(collection(archive, namespace).find(Filters.in("_id", documentIds)))) {
            archived.put(document.get("_id"), document);
        }
        return copyRetrying(namespace, documentIds, fencesAtRead, archived, started);
    }

    private Map<CopyUpDecision, Integer> copyRetrying(String namespace, List<BsonValue> documentIds,
                                                      Map<BsonValue, Fence> fencesAtRead, Map<BsonValue, BsonDocument> archived,
                                                      long started) {
        faults.reached(FaultPoint.WARMER_BEFORE_COPY);
        for (int attempt = 1; ; attempt++) {
            try {
                return copyInTransaction(namespace, documentIds, fencesAtRead, archived, started);
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
            Set<BsonValue> present = new TreeSet<>(BsonOrder.COMPARATOR);
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
