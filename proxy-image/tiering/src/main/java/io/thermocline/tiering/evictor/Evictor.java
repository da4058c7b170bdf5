package io.thermocline.tiering.evictor;

import com.mongodb.MongoNamespace;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.EvictorPass;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.metadata.StateFollower;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.window.Window;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.RateLimiter;
import io.thermocline.tiering.worker.TierClients;
import io.thermocline.tiering.worker.WorkerLoop;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.BsonValue;
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
 *     and its fence is the one read before the barrier (no user delete since); write an eviction fence
 *     (a copy-up in flight then knows its archive read may be stale). Otherwise put it back.</li>
 * </ol>
 */
public final class Evictor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Evictor.class);

    public record Options(String instanceId, boolean verifyArchive, Duration boundPropagationDelay, Duration barrierTimeout,
                          Duration fenceRetention, Duration errorBackoff, PrometheusRegistry registry, FaultInjection faults,
                          Clock clock) {
        public static Options defaults() {
            return new Options("evictor-" + UUID.randomUUID(), true,
                    StateFollower.propagationDelay(Duration.ofSeconds(1)), Duration.ofSeconds(30), Duration.ofMinutes(10),
                    Duration.ofSeconds(5), PrometheusRegistry.defaultRegistry, FaultInjection.NONE, Clock.systemUTC());
        }

        public Options withBoundPropagationDelay(Duration delay) {
            return new Options(instanceId, verifyArchive, delay, barrierTimeout, fenceRetention, errorBackoff, registry, faults, clock);
        }

        public Options withBarrierTimeout(Duration timeout) {
            return new Options(instanceId, verifyArchive, boundPropagationDelay, timeout, fenceRetention, errorBackoff, registry, faults, clock);
        }

        public Options withRegistry(PrometheusRegistry r) {
            return new Options(instanceId, verifyArchive, boundPropagationDelay, barrierTimeout, fenceRetention, errorBackoff, r, faults, clock);
        }

        public Options withFaults(FaultInjection f) {
            return new Options(instanceId, verifyArchive, boundPropagationDelay, barrierTimeout, fenceRetention, errorBackoff, registry, f, clock);
        }

        public Options withErrorBackoff(Duration backoff) {
            return new Options(instanceId, verifyArchive, boundPropagationDelay, barrierTimeout, fenceRetention, backoff, registry, faults, clock);
        }

        public Options withVerifyArchive(boolean verify) {
            return new Options(instanceId, verify, boundPropagationDelay, barrierTimeout, fenceRetention, errorBackoff, registry, faults, clock);
        }

        public Options withClock(Clock c) {
            return new Options(instanceId, verifyArchive, boundPropagationDelay, barrierTimeout, fenceRetention, errorBackoff, registry, faults, c);
        }

        public Options withFenceRetention(Duration retention) {
            return new Options(instanceId, verifyArchive, boundPropagationDelay, barrierTimeout, retention, errorBackoff, registry, faults, clock);
        }
    }

    /** What one pass did, per collection. */
    public record PassResult(Map<String, Map<Eligibility, Long>> outcomes, boolean complete) {
        public long count(String namespace, Eligibility eligibility) {
            return outcomes.getOrDefault(namespace, Map.of()).getOrDefault(eligibility, 0L);
        }
    }

    private final MongoClient fast;
    private final MongoClient archive;
    private final TierClients ownedClients;
    private final List<CollectionPolicy> policies;
    private final EvictorConfig config;
    private final Options options;
    private final MetadataStore store;
    private final MirrorBarrier barrier;
    private final OwnWrites ownWrites;
    private final Fences fences;
    private final FencePurge fencePurge;
    private final DeadLetters deadLetters;
    private final RateLimiter rate;
    private final Counter documents;
    private final WorkerLoop loop;

    public static Evictor start(ThermoclineConfig config) {
        return start(config, Options.defaults());
    }

    /** Runs a pass every {@code evictor.interval} until closed. */
    public static Evictor start(ThermoclineConfig config, Options options) {
        TierClients clients = TierClients.open(config, "thermocline-evictor");
        Evictor evictor = new Evictor(clients.fast(), clients.archive(), clients, config.collections(), config.evictor(), options);
        evictor.loop.start();
        return evictor;
    }

    /** An evictor over clients the caller owns; call {@link #runPass()} or {@link #startLoop()}. */
    public Evictor(MongoClient fast, MongoClient archive, List<CollectionPolicy> policies, EvictorConfig config, Options options) {
        this(fast, archive, null, policies, config, options);
    }

    private Evictor(MongoClient fast, MongoClient archive, TierClients ownedClients, List<CollectionPolicy> policies,
                    EvictorConfig config, Options options) {
        this.fast = fast;
        this.archive = archive;
        this.ownedClients = ownedClients;
        this.policies = List.copyOf(policies);
        this.config = config;
        this.options = options;
        this.store = new MetadataStore(fast);
        this.barrier = new MirrorBarrier(fast, store, "evictor/" + options.instanceId())
                .countingIn(io.thermocline.tiering.metrics.BarrierWaits.in(options.registry(), "evictor"));
        this.ownWrites = new OwnWrites(fast, store, "evictor/" + options.instanceId());
        this.fences = new Fences(store);
        this.fencePurge = new FencePurge(store, barrier, options.barrierTimeout());
        this.deadLetters = new DeadLetters(store);
        this.rate = new RateLimiter(config.maxDocumentsPerSecond());
        this.documents = io.thermocline.tiering.metrics.WorkerCounters.documents(options.registry(), "evictor", "Fast-tier documents the evictor examined, by outcome (EVICT, FEEDER_BEHIND, ARCHIVE_DIFFERS, ...)");
        this.loop = new WorkerLoop("evictor", () -> {
            runPass();
            return config.interval();
        }, options.errorBackoff());
    }

    public Evictor startLoop() {
        loop.start();
        return this;
    }

    public boolean running() {
        return loop.running();
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
        return new PassResult(outcomes, complete);
    }

    private Map<Eligibility, Long> evict(CollectionPolicy policy) throws InterruptedException {
        Window window = new Window(policy);
        Instant cutoff = window.cutoff(options.clock().instant());
        String namespace = policy.namespace();
        NamespaceState before = store.namespace(namespace);
        NamespaceState raised = store.updateNamespace(namespace, s -> s
                .withCoverage(s.oldestCovered() == null ? null : later(s.oldestCovered(), cutoff))
                .withEvictedBelow(s.evictedBelow() == null ? cutoff : later(s.evictedBelow(), cutoff)));
        if (raised.version() != before.version()) {
            // followers must see the raised bound before the documents under it disappear
            Thread.sleep(options.boundPropagationDelay().toMillis());
        }
        MongoCollection<BsonDocument> collection = collection(fast, namespace);
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
            Map<BsonValue, Fence> fencesAtCheck = fences.read(null, namespace, ids);
            boolean mirrored = barrier.sync(options.barrierTimeout()).isPresent();
            Map<BsonValue, BsonDocument> archived = new HashMap<>();
            if (mirrored && options.verifyArchive()) {
                for (BsonDocument document : Blocking.list(collection(archive, namespace).find(Filters.in("_id", ids)))) {
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
                    documents.labelValues(namespace, decision.name()).inc();
                }
            }
            if (!eligible.isEmpty()) {
                options.faults().reached(FaultPoint.EVICTOR_BEFORE_DELETE);
                long evicted = deleteUnchanged(namespace, collection, eligible, fencesAtCheck);
                counts.merge(Eligibility.EVICT, evicted, Long::sum);
                documents.labelValues(namespace, Eligibility.EVICT.name()).inc(evicted);
            }
        }
        EvictorPass pass = new EvictorPass(options.clock().instant(), cutoff, counts.getOrDefault(Eligibility.EVICT, 0L),
                counts.getOrDefault(Eligibility.FEEDER_BEHIND, 0L),
                counts.getOrDefault(Eligibility.ARCHIVE_DIFFERS, 0L) + counts.getOrDefault(Eligibility.NOT_IN_ARCHIVE, 0L));
        store.updateNamespace(namespace, s -> s.withLastEviction(pass));
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
     * <p>Equal content is not enough after a delete and a re-insert since the check (the delete mirrored,
     * the insert not: the archive would hold no copy), so the fence must also be the one read before the
     * barrier. Not covered: an update and its undo (c, c', c) since the check, whose first half the feeder
     * mirrored (the archive holds c') and whose second it reaches after the eviction (its lookup finds
     * nothing): the archive keeps c' (docs/consistency.md, "Point reads that skip the barrier").
     */
    private long deleteUnchanged(String namespace, MongoCollection<BsonDocument> collection, List<BsonDocument> eligible,
                                 Map<BsonValue, Fence> fencesAtCheck) {
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
            // read after the deletes: a user delete committed before them shows here, a later one conflicts with them
            Map<BsonValue, Fence> fencesNow = removedAsChecked.isEmpty() ? Map.of()
                    : fences.read(session, namespace, removedAsChecked.stream().map(d -> d.get("_id")).toList());
            long deleted = 0;
            for (BsonDocument removed : removedAsChecked) {
                BsonValue id = removed.get("_id");
                if (!sameDeletion(fencesAtCheck.get(id), fencesNow.get(id))) {
                    Blocking.run(collection.insertOne(session, removed)); // deleted and re-inserted since the check
                    continue;
                }
                deleted++;
                fences.write(session, namespace, id, Fence.Kind.EVICTION);
            }
            return deleted;
        });
    }

    private static boolean sameDeletion(Fence then, Fence now) {
        return then == null ? now == null : now != null && then.deleteId().equals(now.deleteId());
    }

    private static Instant later(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    static MongoCollection<BsonDocument> collection(MongoClient client, String namespace) {
        MongoNamespace ns = new MongoNamespace(namespace);
        return client.getDatabase(ns.getDatabaseName()).getCollection(ns.getCollectionName(), BsonDocument.class);
    }

    @Override
    public void close() {
        loop.close();
        if (ownedClients != null) {
            ownedClients.close();
        }
    }
}
