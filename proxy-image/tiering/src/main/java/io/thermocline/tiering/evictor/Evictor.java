package io.thermocline.tiering.evictor;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.prometheus.metrics.core.metrics.Counter;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.EvictorPass;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.metadata.StateFollower;
import io.thermocline.tiering.metrics.BarrierWaits;
import io.thermocline.tiering.metrics.WorkerCounters;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.window.Window;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.RateLimiter;
import io.thermocline.tiering.worker.Worker;
import io.thermocline.tiering.worker.FencingWorkerOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes from the fast tier the documents aged before the window, never touching the archive.
 * Per collection and pass:
 * <ol>
 * <li>raise the coverage bound to the cutoff (and record it as {@code evictedBelow}) BEFORE any
 *     delete, then wait for followers to see it: a bound may only promise what is still there;</li>
 * <li>read a batch of candidates, then pass the sync barrier: a probe written after the read is
 *     mirrored, so the archive holds every write the candidates ever received;</li>
 * <li>optionally compare each with its archive copy ({@code verifyArchive});</li>
 * <li>in a marked transaction: delete each only if the version removed equals the one read in step 2
 *     and its fence is the one read before the barrier; write an eviction fence that carries the removed
 *     version (a copy-up in flight then knows its archive read may be stale, and the feeder mirrors that
 *     version for updates it looks up after the eviction). Otherwise put it back.</li>
 * </ol>
 */
public final class Evictor extends Worker<Evictor> {

    private static final Logger LOG = LoggerFactory.getLogger(Evictor.class);
    static final int DELETES_PER_TRANSACTION = 50;

    public static final class Options extends FencingWorkerOptions<Options> {
        private boolean verifyArchive = true;
        private Duration boundPropagationDelay = StateFollower.propagationDelay(Duration.ofSeconds(1));

        private Options() {
            super("evictor", Duration.ofSeconds(5));
        }

        public static Options defaults() {
            return new Options();
        }

        /** Compare each candidate with its archive copy before deleting it. */
        public boolean verifyArchive() {
            return verifyArchive;
        }

        /** How long followers (proxies) take to see a raised coverage bound. */
        public Duration boundPropagationDelay() {
            return boundPropagationDelay;
        }

        public Options withVerifyArchive(boolean verify) {
            return copyWith(o -> o.verifyArchive = verify);
        }

        public Options withBoundPropagationDelay(Duration delay) {
            return copyWith(o -> o.boundPropagationDelay = delay);
        }
    }

    /** What one pass did, per collection. */
    public record PassResult(Map<String, Map<Eligibility, Long>> outcomes, boolean complete) {
        public long count(String namespace, Eligibility eligibility) {
            return outcomes.getOrDefault(namespace, Map.of()).getOrDefault(eligibility, 0L);
        }
    }

    private final EvictorConfig config;
    private final Options options;
    private final MirrorBarrier barrier;
    private final OwnWrites ownWrites;
    private final Fences fences;
    private final FencePurge fencePurge;
    private final DeadLetters deadLetters;
    private final RateLimiter rate;
    private final Counter documents;
    private final io.prometheus.metrics.core.metrics.Gauge fenceCensus;

    /** Runs a pass every {@code evictor.interval} until closed, with its own clients. */
    public static Evictor start(ThermoclineConfig config, Options options) {
        return startOwning(config, "evictor", (fast, archive) -> new Evictor(fast, archive, config.collections(), config.evictor(), options));
    }

    /** An evictor over clients the caller owns; call {@link #runPass()} or {@link #start()}. */
    public Evictor(MongoClient fast, MongoClient archive, List<CollectionPolicy> policies, EvictorConfig config, Options options) {
        super("evictor", fast, archive, policies, options);
        this.config = config;
        this.options = options;
        this.barrier = new MirrorBarrier(fast, store, marker).countingIn(BarrierWaits.in(options.registry(), "evictor"));
        this.ownWrites = new OwnWrites(fast, store, marker);
        this.fences = new Fences(store);
        this.fencePurge = new FencePurge(store, barrier, options.barrierTimeout());
        this.deadLetters = new DeadLetters(store);
        this.rate = new RateLimiter(config.maxDocumentsPerSecond());
        this.documents = WorkerCounters.documents(options.registry(), "evictor",
                "Fast-tier documents the evictor examined, by outcome (EVICT, FEEDER_BEHIND, ARCHIVE_DIFFERS, ...)");
        this.fenceCensus = WorkerCounters.fences(options.registry());
    }

    @Override
    protected Duration round() throws InterruptedException {
        runPass();
        return config.interval();
    }

    /** One pass over every tiered collection. */
    public PassResult runPass() throws InterruptedException {
        store.ensureCollections();
        Map<String, Map<Eligibility, Long>> outcomes = new HashMap<>();
        boolean complete = true;
        for (CollectionPolicy policy : policies) {
            Map<Eligibility, Long> counts = evict(policy);
            outcomes.put(policy.namespace(), counts);
            complete &= counts.getOrDefault(Eligibility.FEEDER_BEHIND, 0L) == 0;
        }
        FencePurge.Result purge = fencePurge.purge(options.clock().instant().minus(options.fenceRetention()));
        if (purge.purged() > 0 || purge.keptForFeeder() > 0) {
            LOG.info("event=fences_purged count={} keptForFeeder={}", purge.purged(), purge.keptForFeeder());
        }
        takeFenceCensus();
        return new PassResult(outcomes, complete);
    }

    /** Counts the fences by kind for operators, and removes claim placeholders an earlier version left committed. */
    private void takeFenceCensus() {
        Map<String, Long> kinds = fencePurge.countByKind();
        Long leftovers = kinds.get(Fence.CLAIM_KIND);
        if (leftovers != null) {
            long removed = fencePurge.removeLeftoverClaims();
            LOG.warn("event=leftover_claims_removed count={} reason=\"claim placeholders committed by a version before the on-disk key-order fix\"", removed);
        }
        fenceCensus.clear();
        kinds.forEach((kind, n) -> fenceCensus.labelValues(kind).set(n));
    }

    private Map<Eligibility, Long> evict(CollectionPolicy policy) throws InterruptedException {
        Window window = new Window(policy);
        Instant cutoff = window.cutoff(options.clock().instant());
        Namespace namespace = Namespace.of(policy);
        NamespaceState before = store.namespace(policy.namespace());
        NamespaceState raised = store.updateNamespace(policy.namespace(), s -> s
                .withCoverage(s.oldestCovered() == null ? null : later(s.oldestCovered(), cutoff))
                .withEvictedBelow(s.evictedBelow() == null ? cutoff : later(s.evictedBelow(), cutoff)));
        if (raised.version() != before.version()) {
            // followers must see the raised bound before the documents under it disappear
            Thread.sleep(options.boundPropagationDelay().toMillis());
        }
        MongoCollection<BsonDocument> collection = namespace.in(fast);
        Map<Eligibility, Long> counts = new EnumMap<>(Eligibility.class);
        BsonValue lastId = null;
        while (true) {
            Bson filter = lastId == null ? window.olderThan(cutoff) : Filters.and(window.olderThan(cutoff), Filters.gt("_id", lastId));
            List<BsonDocument> candidates = Blocking.list(collection.find(filter).sort(Sorts.ascending("_id")).limit(config.batchSize()));
            if (candidates.isEmpty()) {
                break;
            }
            lastId = candidates.get(candidates.size() - 1).get("_id");
            rate.acquire(candidates.size());
            List<BsonValue> ids = candidates.stream().map(d -> d.get("_id")).toList();
            // read before the barrier: a user delete after this read changes the fence, and the delete then keeps the document
            Map<BsonValue, Fence> fencesAtCheck = fences.read(null, namespace.toString(), ids);
            boolean mirrored = barrier.sync(options.barrierTimeout()).isPresent();
            Map<BsonValue, BsonDocument> archived = new HashMap<>();
            if (mirrored && options.verifyArchive()) {
                for (BsonDocument document : Blocking.list(namespace.in(archive).find(Filters.in("_id", ids)))) {
                    archived.put(document.get("_id"), document);
                }
            }
            // read after the barrier: the feeder records a refused write before it checkpoints past it
            Set<BsonValue> lettered = new TreeSet<>(BsonOrder.COMPARATOR);
            if (mirrored) {
                lettered.addAll(deadLetters.among(namespace, ids));
            }
            List<BsonDocument> eligible = new ArrayList<>();
            for (BsonDocument candidate : candidates) {
                Eligibility decision = Eligibility.decide(window.age(candidate), cutoff, mirrored, options.verifyArchive(),
                        lettered.contains(candidate.get("_id")), candidate, archived.get(candidate.get("_id")));
                if (decision == Eligibility.EVICT) {
                    eligible.add(candidate);
                } else {
                    counts.merge(decision, 1L, Long::sum);
                    documents.labelValues(policy.namespace(), decision.name()).inc();
                }
            }
            if (!eligible.isEmpty()) {
                options.faults().reached(FaultPoint.EVICTOR_BEFORE_DELETE);
                long evicted = 0;
                // short transactions: each holds its documents (on the embedded replica set, the write lock) until it commits
                for (int from = 0; from < eligible.size(); from += DELETES_PER_TRANSACTION) {
                    evicted += deleteUnchanged(namespace, collection,
                            eligible.subList(from, Math.min(eligible.size(), from + DELETES_PER_TRANSACTION)), fencesAtCheck);
                }
                counts.merge(Eligibility.EVICT, evicted, Long::sum);
                documents.labelValues(policy.namespace(), Eligibility.EVICT.name()).inc(evicted);
            }
        }
        EvictorPass pass = new EvictorPass(options.clock().instant(), cutoff, counts.getOrDefault(Eligibility.EVICT, 0L),
                counts.getOrDefault(Eligibility.FEEDER_BEHIND, 0L),
                counts.getOrDefault(Eligibility.ARCHIVE_DIFFERS, 0L) + counts.getOrDefault(Eligibility.NOT_IN_ARCHIVE, 0L));
        store.updateNamespace(policy.namespace(), s -> s.withLastEviction(pass));
        LOG.info("event=eviction_pass namespace={} cutoff={} evicted={} feederBehind={} archiveDiffers={} deadLettered={}", namespace,
                cutoff, pass.evicted(), pass.keptForFeeder(), pass.keptArchiveDiffers(), counts.getOrDefault(Eligibility.DEAD_LETTERED, 0L));
        return counts;
    }


    /**
     * Deletes each document only if it is still exactly as checked: a user write meanwhile keeps it.
     * The comparison is made on the version the delete itself removed, not on an earlier read: a user
     * update committed between a read and the delete would otherwise be deleted with it (and lost, when
     * the feeder looks the updated document up after the eviction). A server with snapshot isolation
     * reports that as a WriteConflict; one without it does not, so a changed version is put back.
     *
     * <p>Equal content is not enough: an update and its undo (c, c', c), or a delete and a re-insert,
     * since the check leave the content as checked while the feeder has mirrored only part of them (the
     * archive holds c', or nothing), and the rest of their events reach it after the eviction (an update's
     * lookup then finds nothing). So the transaction requires that the fence is the one read before the
     * barrier (no user delete since), and its eviction fence carries the removed version: the feeder mirrors
     * that version for an update whose lookup finds the document gone ({@code feeder.EvictedVersions}), so
     * the archive ends with it. Reads of the document wait for the feeder meanwhile (it is fenced).
     * A version too large to ride in its fence is instead compared with the archive inside the transaction
     * (which, on the embedded replica set, holds the fast tier's write lock during an archive read).
     */
    private long deleteUnchanged(Namespace namespace, MongoCollection<BsonDocument> collection, List<BsonDocument> eligible,
                                 Map<BsonValue, Fence> fencesAtCheck) {
        MongoCollection<BsonDocument> archived = namespace.in(archive);
        return ownWrites.inTransaction(session -> {
            List<BsonDocument> removedAsChecked = new ArrayList<>();
            for (BsonDocument checked : eligible) {
                BsonDocument removed = Blocking.single(collection.findOneAndDelete(session, Filters.eq("_id", checked.get("_id")))).orElse(null);
                if (removed == null) {
                    continue;
                }
                if (!checked.equals(removed)) {
                    Blocking.run(collection.insertOne(session, removed)); // changed since checked: leave it as the user wrote it
                    continue;
                }
                removedAsChecked.add(removed);
            }
            List<BsonValue> ids = removedAsChecked.stream().map(d -> d.get("_id")).toList();
            Map<BsonValue, Fence> fencesNow = ids.isEmpty() ? Map.of() : fences.read(session, namespace.toString(), ids);
            Set<BsonValue> tooLarge = new TreeSet<>(BsonOrder.COMPARATOR);
            removedAsChecked.stream().filter(d -> !fitsInFence(d)).forEach(d -> tooLarge.add(d.get("_id")));
            Map<BsonValue, BsonDocument> archiveNow = new TreeMap<>(BsonOrder.COMPARATOR);
            if (!tooLarge.isEmpty()) {
                Blocking.list(archived.find(Filters.in("_id", List.copyOf(tooLarge)))).forEach(d -> archiveNow.put(d.get("_id"), d));
            }
            long deleted = 0;
            for (BsonDocument removed : removedAsChecked) {
                BsonValue id = removed.get("_id");
                boolean fits = !tooLarge.contains(id);
                if (!sameDeletion(fencesAtCheck.get(id), fencesNow.get(id)) || !fits && !removed.equals(archiveNow.get(id))) {
                    Blocking.run(collection.insertOne(session, removed)); // the archive may not end with this version
                    continue;
                }
                deleted++;
                if (fits) {
                    fences.writeEviction(session, namespace.toString(), removed);
                } else {
                    fences.write(session, namespace.toString(), id, Fence.Kind.EVICTION);
                }
            }
            return deleted;
        });
    }

    /** Half the 16 MB document limit: the fence adds its key, and its change event must stay under the limit. */
    static final int MAX_VERSION_IN_FENCE = 8 * 1024 * 1024;

    private static boolean fitsInFence(BsonDocument document) {
        return new RawBsonDocument(document, new BsonDocumentCodec()).getByteBuffer().remaining() <= MAX_VERSION_IN_FENCE;
    }

    private static boolean sameDeletion(Fence then, Fence now) {
        return then == null ? now == null : now != null && then.deleteId().equals(now.deleteId());
    }

    private static Instant later(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }
}
