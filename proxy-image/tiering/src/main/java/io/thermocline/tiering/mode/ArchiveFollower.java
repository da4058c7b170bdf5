package io.thermocline.tiering.mode;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.OperationType;
import com.mongodb.reactivestreams.client.MongoClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.WorkerLoop;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the fast tier in step with the archive while the archive is authoritative (shadow, a cutover,
 * drained): tails the archive's change stream on the tiered namespaces and applies each change to the
 * fast tier in a marked transaction ({@link OwnWrites}), so the feeder never mirrors it back. A delete
 * writes a fence as a user delete does, so a warm copy in flight cannot resurrect the document.
 *
 * <p>One instance follows at a time: it holds the {@link FollowerLease} (every feeder process runs a
 * follower, and a rolling update runs two at once). Every write it makes is fenced by its term: the
 * transaction that applies a batch first writes the follower's progress on the condition that the lease
 * still names this term, so a deposed follower's in-flight batch aborts instead of landing over newer
 * events its successor applied.
 *
 * <p>It reports {@code appliedThrough}: every archive change up to that time is in the fast tier. It
 * knows because it reads the archive's majority time first and then drains the stream until a getMore
 * comes back empty ({@code tryNext}). During a cutover it applies nothing after the document's
 * {@code cutoverAt}; in the tiered phases it does nothing (the feeder's own mirror writes would come
 * back as archive changes and could overwrite newer fast-tier versions). When the archive's oplog no
 * longer holds its resume point it resyncs ({@link ArchiveResync}).
 */
public final class ArchiveFollower implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ArchiveFollower.class);
    /** Events per transaction; documents per page of a resync. */
    static final int BATCH = 100;

    /** Tuning: the pause of an idle follower, the lease, test hooks and the metrics registry. */
    public record Options(Duration idle, Duration lease, FaultInjection faults, PrometheusRegistry registry) {

        public static Options defaults(Duration idle) {
            return new Options(idle, Duration.ofSeconds(10), FaultInjection.NONE, PrometheusRegistry.defaultRegistry);
        }

        public Options withLease(Duration duration) {
            return new Options(idle, duration, faults, registry);
        }

        public Options withFaults(FaultInjection injection) {
            return new Options(idle, lease, injection, registry);
        }

        public Options withRegistry(PrometheusRegistry r) {
            return new Options(idle, lease, faults, r);
        }
    }

    // the parts its resync (ArchiveResync) works with too
    final MongoClient fast;
    final com.mongodb.client.MongoClient archive;
    final List<CollectionPolicy> policies;
    final MetadataStore store;
    final ModeStore modes;
    final OwnWrites ownWrites;
    final Options options;
    final FollowerMetrics metrics;

    private final String instanceId;
    private final Fences fences;
    private final WorkerLoop loop;
    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor;
    private BsonTimestamp cursorOrigin;
    private FollowerLease lease;
    private long renewAtNanos;
    private volatile long applied;
    private volatile long deposed;

    public ArchiveFollower(
            MongoClient fast,
            com.mongodb.client.MongoClient archive,
            List<CollectionPolicy> policies,
            String instanceId,
            Duration idle) {
        this(fast, archive, policies, instanceId, Options.defaults(idle));
    }

    public ArchiveFollower(
            MongoClient fast,
            com.mongodb.client.MongoClient archive,
            List<CollectionPolicy> policies,
            String instanceId,
            Options options) {
        this.fast = fast;
        this.archive = archive;
        this.policies = List.copyOf(policies);
        this.instanceId = instanceId;
        this.store = new MetadataStore(fast);
        this.modes = new ModeStore(store);
        this.ownWrites = new OwnWrites(fast, store, "follower/" + instanceId);
        this.fences = new Fences(store);
        this.options = options;
        this.metrics = FollowerMetrics.in(options.registry());
        this.loop =
                new WorkerLoop("archive-follower", this::round, options.idle().multipliedBy(5));
    }

    public ArchiveFollower start() {
        loop.start();
        return this;
    }

    /** Changes applied to the fast tier so far. */
    public long applied() {
        return applied;
    }

    /** Times this instance found its lease taken by another (its write, if one was in flight, was refused). */
    public long deposed() {
        return deposed;
    }

    /** One pass: everything the archive committed up to now, or nothing outside the archive-authoritative phases. */
    Duration round() throws InterruptedException {
        ModeDocument mode = modes.read();
        if (!mode.exists() || !mode.phase().archiveAuthoritative() || mode.followFrom() == null || !leaseHeld()) {
            closeCursor();
            return options.idle();
        }
        try {
            try {
                return follow(mode);
            } catch (MongoException e) {
                if (!Feeder.historyLost(e)) {
                    throw e;
                }
                // the archive's oplog no longer holds the resume point (code 286)
                new ArchiveResync(this, lease).run(e);
                return Duration.ZERO;
            }
        } catch (StaleStateException e) {
            if (lease != null) { // not yet counted by a failed renewal
                deposed(e.getMessage());
            }
            return options.idle();
        }
    }

    private Duration follow(ModeDocument mode) {
        FollowerState state = modes.follower();
        if (!mode.followFrom().equals(state.origin())) {
            // a new drain point: the fast tier equals the archive up to it, start from there
            closeCursor();
            state = state.restartedAt(mode.followFrom());
            modes.saveFollower(null, lease, state);
        }
        if (cursor == null || !mode.followFrom().equals(cursorOrigin)) {
            open(state);
        }
        BsonTimestamp limit = mode.phase() == Phase.CUTTING_OVER ? mode.cutoverAt() : null;
        BsonTimestamp now = archiveMajorityTime();
        List<ChangeStreamDocument<BsonDocument>> batch = new ArrayList<>();
        boolean reachedLimit = false;
        ChangeStreamDocument<BsonDocument> event;
        while ((event = cursor.tryNext()) != null) {
            if (limit != null
                    && event.getClusterTime() != null
                    && event.getClusterTime().compareTo(limit) > 0) {
                reachedLimit = true; // only the feeder's writes come after a cutover point; never apply them
                break;
            }
            batch.add(event);
            if (batch.size() >= BATCH) {
                state = apply(state, batch);
                batch.clear();
            }
        }
        state = apply(state, batch);
        BsonTimestamp through = limit != null && (reachedLimit || now.compareTo(limit) > 0) ? limit : now;
        if (state.appliedThrough() == null || through.compareTo(state.appliedThrough()) > 0) {
            modes.saveFollower(null, lease, state.applied(cursor.getResumeToken(), through));
        }
        return reachedLimit ? options.idle().multipliedBy(2) : options.idle();
    }

    /**
     * True while this instance holds the lease: renewed after a third of it, taken when free or expired.
     * A renewal that finds another term deposes this instance; taking it reopens the stream from the
     * progress the previous holder committed.
     */
    boolean leaseHeld() {
        if (lease != null) {
            if (System.nanoTime() < renewAtNanos) {
                return true;
            }
            long sent = System.nanoTime();
            if (modes.renewFollowerLease(lease, Instant.now().plus(options.lease()))) {
                renewAtNanos = sent + options.lease().toNanos() / 3;
                return true;
            }
            deposed("the lease renewal found another term");
            return false;
        }
        long sent = System.nanoTime();
        Optional<FollowerState> taken = modes.takeFollowerLease(instanceId, options.lease(), Instant.now());
        if (taken.isEmpty()) {
            return false;
        }
        lease = taken.get().lease();
        renewAtNanos = sent + options.lease().toNanos() / 3;
        metrics.leader.set(1);
        closeCursor();
        LOG.info("event=archive_follower_lease_taken instance={} term={}", instanceId, lease.term());
        return true;
    }

    private void deposed(String why) {
        LOG.warn(
                "event=archive_follower_deposed instance={} term={} reason=\"{}\"",
                instanceId,
                lease == null ? 0 : lease.term(),
                why);
        deposed++;
        metrics.deposed.inc();
        metrics.leader.set(0);
        lease = null;
        closeCursor();
    }

    private FollowerState apply(FollowerState state, List<ChangeStreamDocument<BsonDocument>> events) {
        if (events.isEmpty()) {
            return state;
        }
        Map<String, BsonTimestamp> changing = new HashMap<>();
        BsonTimestamp lookupBound = null;
        for (ChangeStreamDocument<BsonDocument> e : events) {
            if (e.getNamespace() != null && e.getClusterTime() != null) {
                changing.merge(e.getNamespace().getFullName(), e.getClusterTime(), ArchiveFollower::later);
                if (e.getOperationType() == OperationType.UPDATE) {
                    // its post-image was looked up when the event was read: the document as the archive held it then,
                    // possibly after later changes whose events come in a later batch. The archive's majority time,
                    // read
                    // after the events, bounds every lookup (it reads majority-committed data), so announce up to it.
                    lookupBound = lookupBound == null ? archiveMajorityTime() : lookupBound;
                    changing.merge(e.getNamespace().getFullName(), lookupBound, ArchiveFollower::later);
                }
            }
        }
        // announce before applying: a shadow comparison reading this after its fast-tier read sees every change it may
        // have met
        FollowerState announced = state.withChanging(changing);
        modes.saveFollower(null, lease, announced);
        options.faults().reached(FaultPoint.FOLLOWER_BEFORE_APPLY);
        BsonTimestamp last = events.get(events.size() - 1).getClusterTime();
        FollowerState next = announced.applied(
                events.get(events.size() - 1).getResumeToken(), last == null ? announced.appliedThrough() : last);
        ownWrites.inTransaction(session -> {
            modes.saveFollower(session, lease, next); // the fence: commits only while the lease names this term
            for (ChangeStreamDocument<BsonDocument> e : events) {
                applyOne(session, e);
            }
            return null;
        });
        applied += events.size();
        metrics.applied.inc(events.size());
        options.faults().reached(FaultPoint.FOLLOWER_APPLIED);
        return next;
    }

    private static BsonTimestamp later(BsonTimestamp a, BsonTimestamp b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private void applyOne(
            com.mongodb.reactivestreams.client.ClientSession session, ChangeStreamDocument<BsonDocument> e) {
        if (e.getNamespace() == null || e.getDocumentKey() == null) {
            return;
        }
        String ns = e.getNamespace().getFullName();
        var collection = Namespace.parse(ns).in(fast);
        OperationType type = e.getOperationType();
        if (type == OperationType.DELETE) {
            deleteFenced(session, ns, e.getDocumentKey().get("_id"));
        } else if (type == OperationType.INSERT || type == OperationType.REPLACE || type == OperationType.UPDATE) {
            BsonDocument full = e.getFullDocument();
            if (full != null) { // null: deleted since; its delete event follows
                Blocking.run(collection.replaceOne(
                        session, Filters.eq("_id", full.get("_id")), full, new ReplaceOptions().upsert(true)));
            }
        } else {
            LOG.warn("event=archive_follower_ignored operation={} namespace={}", type, ns);
        }
    }

    void deleteFenced(com.mongodb.reactivestreams.client.ClientSession session, String ns, BsonValue id) {
        fences.write(session, ns, id, Fence.Kind.USER_DELETE);
        Blocking.run(Namespace.parse(ns).in(fast).deleteOne(session, Filters.eq("_id", id)));
    }

    private void open(FollowerState state) {
        closeCursor();
        List<Bson> namespaces = new ArrayList<>();
        for (CollectionPolicy p : policies) {
            namespaces.add(Filters.and(Filters.eq("ns.db", p.database()), Filters.eq("ns.coll", p.collection())));
        }
        ChangeStreamIterable<BsonDocument> stream = archive.watch(
                        List.of(Aggregates.match(Filters.or(namespaces))), BsonDocument.class)
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .maxAwaitTime(50, java.util.concurrent.TimeUnit.MILLISECONDS);
        if (state.resumeToken() != null) {
            stream = stream.resumeAfter(state.resumeToken());
        } else {
            BsonTimestamp from = state.appliedThrough();
            stream = stream.startAtOperationTime(new BsonTimestamp(from.getTime(), from.getInc() + 1));
        }
        cursor = stream.cursor();
        cursorOrigin = state.origin();
        LOG.info(
                "event=archive_follower_started origin={} resumed={} term={}",
                state.origin(),
                state.resumeToken() != null,
                lease.term());
    }

    BsonTimestamp archiveMajorityTime() {
        try (ClientSession session = archive.startSession()) {
            CollectionPolicy first = policies.get(0);
            archive.getDatabase(first.database())
                    .getCollection(first.collection(), BsonDocument.class)
                    .withReadConcern(ReadConcern.MAJORITY)
                    .find(
                            session,
                            Filters.eq("_id", new BsonDocument("thermoclineNoSuchId", new org.bson.BsonInt32(1))))
                    .limit(1)
                    .first();
            BsonTimestamp time = session.getOperationTime();
            if (time == null) {
                throw new IllegalStateException(
                        "the archive returned no operationTime: it must be a replica set to be followed");
            }
            return time;
        }
    }

    void closeCursor() {
        if (cursor != null) {
            try {
                cursor.close();
            } catch (RuntimeException ignored) {
                // the next round opens a new one
            }
            cursor = null;
        }
    }

    /** Stops following; a held lease is given up at once, so another process's follower takes over without waiting for it. */
    @Override
    public void close() {
        loop.close();
        closeCursor();
        if (lease != null) {
            try {
                modes.renewFollowerLease(lease, Instant.EPOCH);
            } catch (RuntimeException e) {
                LOG.info("event=archive_follower_lease_kept reason=\"{}\"", e.toString()); // it expires by itself
            }
            metrics.leader.set(0);
        }
    }
}
