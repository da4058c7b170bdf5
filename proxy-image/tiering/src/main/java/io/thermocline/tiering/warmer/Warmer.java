package io.thermocline.tiering.warmer;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.reactivestreams.client.MongoClient;
import io.prometheus.metrics.core.metrics.Counter;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.metadata.WarmerCheckpoint;
import io.thermocline.tiering.metrics.BarrierWaits;
import io.thermocline.tiering.metrics.WorkerCounters;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.window.Window;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.FencingWorkerOptions;
import io.thermocline.tiering.worker.RateLimiter;
import io.thermocline.tiering.worker.Worker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies the archive's documents inside the window into the fast tier, newest first, in
 * rate-limited batches. Each batch goes through {@link CopyUp} (never overwrites a fast-tier
 * version, never resurrects a deleted document), then a compare-and-set of the checkpoint and of
 * the lowered coverage bound ({@link CoverageLowering}). Resumes from the checkpoint after any
 * crash: re-copying a batch is harmless, since a copy never overwrites.
 */
public final class Warmer extends Worker<Warmer> {

    private static final Logger LOG = LoggerFactory.getLogger(Warmer.class);

    public static final class Options extends FencingWorkerOptions<Options> {
        private Duration recheckInterval = Duration.ofMinutes(1);

        private Options() {
            super("warmer", Duration.ofSeconds(5));
        }

        public static Options defaults() {
            return new Options();
        }

        /** How often a warm collection is checked again (a grown window restarts it). */
        public Duration recheckInterval() {
            return recheckInterval;
        }

        public Options withRecheckInterval(Duration interval) {
            return copyWith(o -> o.recheckInterval = interval);
        }
    }

    /** The result of one batch. */
    public enum Progress {
        COPIED_BATCH,
        COMPLETE,
        FEEDER_BEHIND,
        LOST_RACE
    }

    private final WarmerConfig config;
    private final Options options;
    private final CopyUp copyUp;
    private final RateLimiter rate;
    private final Counter documents;

    /** Warms every collection, then re-checks every {@code recheckInterval}, with its own clients. */
    public static Warmer start(ThermoclineConfig config, Options options) {
        return startOwning(
                config,
                "warmer",
                (fast, archive) -> new Warmer(fast, archive, config.collections(), config.warmer(), options));
    }

    /** A warmer over clients the caller owns; call {@link #warmAll()} or {@link #start()}. */
    public Warmer(
            MongoClient fast,
            MongoClient archive,
            List<CollectionPolicy> policies,
            WarmerConfig config,
            Options options) {
        super("warmer", fast, archive, policies, options);
        this.config = config;
        this.options = options;
        this.copyUp = new CopyUp(
                fast,
                archive,
                store,
                new OwnWrites(fast, store, marker),
                new MirrorBarrier(fast, store, marker).countingIn(BarrierWaits.in(options.registry(), "warmer")),
                options.barrierTimeout(),
                options.fenceRetention(),
                options.faults());
        this.rate = new RateLimiter(config.maxDocumentsPerSecond());
        this.documents = WorkerCounters.documents(
                options.registry(),
                "warmer",
                "Archive documents the warmer considered, by outcome (COPY, SKIP_FAST_TIER_HAS_IT, SKIP_DELETED_SINCE_READ, ...)");
    }

    @Override
    protected Duration round() throws InterruptedException {
        return warmAll() ? options.recheckInterval() : options.errorBackoff();
    }

    /** Warms every collection until complete; false when a collection could not finish now. */
    public boolean warmAll() throws InterruptedException {
        store.ensureCollections();
        boolean complete = true;
        for (CollectionPolicy policy : policies) {
            complete &= warm(policy);
        }
        return complete;
    }

    /** Warms one collection to completion; false when the feeder was behind (retry later). */
    public boolean warm(CollectionPolicy policy) throws InterruptedException {
        while (true) {
            Progress progress = step(policy);
            if (progress == Progress.COMPLETE) {
                return true;
            }
            if (progress == Progress.FEEDER_BEHIND) {
                return false;
            }
        }
    }

    /** One batch of one collection. */
    public Progress step(CollectionPolicy policy) throws InterruptedException {
        Namespace namespace = Namespace.of(policy);
        Window window = new Window(policy);
        Instant cutoff = window.cutoff(options.clock().instant());
        NamespaceState state = store.namespace(policy.namespace());
        WarmerCheckpoint checkpoint = state.warmer();
        if (checkpoint != null && checkpoint.complete() && !cutoff.isBefore(checkpoint.cutoff())) {
            return Progress.COMPLETE;
        }
        Bson filter = window.atOrAfter(cutoff);
        if (checkpoint != null && checkpoint.started() && resumable(checkpoint)) {
            filter = Filters.and(filter, after(policy, checkpoint, window, cutoff));
        }
        List<BsonDocument> keys = Blocking.list(namespace
                .in(archive)
                .find(filter)
                .projection(Projections.include("_id", policy.ageField()))
                .sort(policy.agedByObjectId() ? Sorts.descending("_id") : Sorts.descending(policy.ageField(), "_id"))
                .limit(config.batchSize()));
        boolean fromTop = checkpoint == null || checkpoint.started() || !checkpoint.complete();
        if (keys.isEmpty()) {
            WarmerCheckpoint done = new WarmerCheckpoint(
                    cutoff,
                    checkpoint == null ? null : checkpoint.lastAge(),
                    checkpoint == null ? null : checkpoint.lastId(),
                    true,
                    checkpoint == null ? 0 : checkpoint.copied(),
                    options.clock().instant());
            return save(
                    state,
                    state.withWarmer(done)
                            .withCoverage(CoverageLowering.lower(
                                    state.oldestCovered(), cutoff, state.evictedBelow(), fromTop)),
                    Progress.COMPLETE);
        }
        rate.acquire(keys.size());
        CopyUp.Result result = copyUp.copy(
                policy.namespace(), keys.stream().map(k -> k.get("_id")).toList());
        result.counts()
                .forEach((decision, n) -> documents
                        .labelValues(policy.namespace(), decision.name())
                        .inc(n));
        if (result.feederBehind()) {
            // the unfenced documents are copied; the batch is walked again for the fenced ones
            LOG.info("event=warm_batch_deferred namespace={} reason=feeder_behind", namespace);
            return Progress.FEEDER_BEHIND;
        }
        if (result.count(CopyUpDecision.SKIP_TOO_SLOW) > 0) {
            return Progress.FEEDER_BEHIND;
        }
        options.faults().reached(FaultPoint.WARMER_COPIED);
        BsonDocument last = keys.get(keys.size() - 1);
        BsonValue lastKey = CoverageLowering.walkKey(policy, last);
        WarmerCheckpoint next = new WarmerCheckpoint(
                cutoff,
                lastKey,
                last.get("_id"),
                false,
                (checkpoint == null ? 0 : checkpoint.copied()) + result.copied(),
                options.clock().instant());
        NamespaceState advanced = state.withWarmer(next);
        Optional<Instant> proven = CoverageLowering.provenBy(
                policy, lastKey, lastKey.isDateTime() && numberAgedDocumentsInWindow(policy, window, cutoff));
        if (proven.isPresent()) {
            advanced = advanced.withCoverage(
                    CoverageLowering.lower(state.oldestCovered(), proven.get(), state.evictedBelow(), fromTop));
        }
        return save(state, advanced, Progress.COPIED_BATCH);
    }

    private Progress save(NamespaceState previous, NamespaceState next, Progress progress) {
        try {
            store.saveNamespace(previous, next);
            return progress;
        } catch (StaleStateException e) {
            // another warmer or the evictor moved the state: decide again from the new one
            return Progress.LOST_RACE;
        }
    }

    /** A checkpoint written before walk keys were scalar (an array age) cannot be resumed: walk again from the top. */
    private static boolean resumable(WarmerCheckpoint checkpoint) {
        return checkpoint.lastAge() != null && !checkpoint.lastAge().isArray();
    }

    /**
     * Documents after the checkpoint in the walk's order (MongoDB's descending sort on the age field,
     * then {@code _id} descending): those whose sort key is below the checkpoint's, or equal to it
     * with a smaller {@code _id}. A sort key is the greatest value the path reaches, so "below K"
     * means no reached value is above K: none greater in K's own type, none of a type ranked above.
     * A plain {@code $lt} would not do: an array matches it when any element is smaller, and an
     * array age at the end of a batch used to make the next batch compare with the array itself.
     *
     * <p>That {@code $nor} decides, and a range beside it lets an index on the age field start the walk
     * at the checkpoint instead of at the newest document ({@link #seekable}): without it, batch n of the
     * walk read the n x batchSize index entries above the checkpoint again before its own.
     */
    static Bson after(CollectionPolicy policy, WarmerCheckpoint checkpoint, Window window, Instant cutoff) {
        Bson exact = exactlyAfter(policy, checkpoint);
        if (policy.agedByObjectId()) {
            return exact;
        }
        return seekable(policy.ageField(), checkpoint.lastAge(), window, cutoff)
                .map(range -> Filters.and(range, exact))
                .orElse(exact);
    }

    /** The documents after the checkpoint, exactly (see {@link #after}). */
    static Bson exactlyAfter(CollectionPolicy policy, WarmerCheckpoint checkpoint) {
        if (policy.agedByObjectId()) {
            return Filters.lt("_id", checkpoint.lastId());
        }
        String field = policy.ageField();
        BsonValue key = checkpoint.lastAge();
        // $nor, not $not: it negates the whole clause, so an array is excluded when ANY element is above
        List<Bson> sortsAtOrAbove = new ArrayList<>();
        sortsAtOrAbove.add(Filters.gt(field, key));
        List<BsonType> typesAbove = BsonOrder.typesRankedAbove(key.getBsonType());
        if (!typesAbove.isEmpty()) {
            sortsAtOrAbove.add(new BsonDocument(
                    field,
                    new BsonDocument(
                            "$type",
                            new BsonArray(typesAbove.stream()
                                    .map(t -> (BsonValue) new BsonInt32(t.getValue()))
                                    .toList()))));
        }
        sortsAtOrAbove.add(Filters.and(Filters.eq(field, key), Filters.gte("_id", checkpoint.lastId())));
        return Filters.nor(sortsAtOrAbove.toArray(Bson[]::new));
    }

    /**
     * A range on the age field that every window document the {@code $nor} above admits is in, which an
     * index can seek to: at or below the checkpoint's key in its type ({@code $lte}: an array matches when
     * any element does, and an admitted array's elements are all at or below it), and, after a date, the
     * window's numbers, which rank below every date. Only for the window's encodings (dates and numbers); a
     * range cannot replace the {@code $nor}, which is what excludes an array with an element above the key.
     */
    static Optional<Bson> seekable(String field, BsonValue key, Window window, Instant cutoff) {
        return switch (key.getBsonType()) {
            case DATE_TIME -> Optional.of(Filters.or(Filters.lte(field, key), window.numbersAtOrAfter(cutoff)));
            case INT32, INT64, DOUBLE -> Optional.of(Filters.lte(field, key));
            default -> Optional.empty();
        };
    }

    /** Whether the archive holds a document with a number age in the window (the walk reaches numbers after every date). */
    private boolean numberAgedDocumentsInWindow(CollectionPolicy policy, Window window, Instant cutoff) {
        // sorted as the walk is, so an index on the age field answers from its first number instead of the
        // whole collection being read to find there is none
        return Blocking.single(Namespace.of(policy)
                        .in(archive)
                        .find(window.numbersAtOrAfter(cutoff))
                        .projection(Projections.include("_id"))
                        .sort(Sorts.descending(policy.ageField(), "_id"))
                        .first())
                .isPresent();
    }
}
