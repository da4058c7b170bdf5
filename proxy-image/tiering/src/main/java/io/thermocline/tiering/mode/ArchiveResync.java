package io.thermocline.tiering.mode;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.AgeValue;
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link ArchiveFollower}'s resync: the archive's change stream lost the follower's resume point, so the fast
 * tier is made equal to the archive again, every write fenced by the follower's lease as its batches are. One
 * instance per resync, run by the follower holding the lease.
 */
final class ArchiveResync {

    // the follower's logger: a resync's events are the follower's
    private static final Logger LOG = LoggerFactory.getLogger(ArchiveFollower.class);
    /** Above every cluster time: announced while a resync may write any version. */
    private static final BsonTimestamp ANY_TIME = new BsonTimestamp(-1L);

    private final ArchiveFollower follower;
    private final MongoClient fast;
    private final com.mongodb.client.MongoClient archive;
    private final List<CollectionPolicy> policies;
    private final MetadataStore store;
    private final ModeStore modes;
    private final OwnWrites ownWrites;
    private final FollowerMetrics metrics;
    private final FaultInjection faults;
    /** The follower's lease when the resync began: a resync that finds it lost stops ({@link StaleStateException}). */
    private final FollowerLease lease;

    ArchiveResync(ArchiveFollower follower, FollowerLease lease) {
        this.follower = follower;
        this.fast = follower.fast;
        this.archive = follower.archive;
        this.policies = follower.policies;
        this.store = follower.store;
        this.modes = follower.modes;
        this.ownWrites = follower.ownWrites;
        this.metrics = follower.metrics;
        this.faults = follower.options.faults();
        this.lease = lease;
    }

    /**
     * The archive's oplog no longer holds the resume point (code 286): events were lost, so the fast tier is
     * made equal to the archive again. The stream position is taken BEFORE the copy, and the stream restarts
     * just after it: every archive change during the copy is applied again afterwards, in order (each is an
     * idempotent upsert of a post-image or a delete), so nothing between is lost. While it runs, every followed
     * namespace is announced as changing at any time (a shadow comparison cannot blame a difference on the
     * fast tier); at the end, at the archive time after the copy, which bounds every version it wrote.
     * A crash during it resumes from the old progress, loses history again and resyncs again.
     */
    void run(MongoException cause) {
        follower.closeCursor();
        metrics.resyncs.inc();
        metrics.resyncing.set(1);
        try {
            FollowerState state = modes.follower();
            long count = state.resync() == null ? 1 : state.resync().count() + 1;
            Instant started = Instant.now();
            String reason = "archive change stream history lost (code " + cause.getCode() + ")";
            BsonTimestamp position = follower.archiveMajorityTime();
            LOG.warn(
                    "event=archive_follower_history_lost code={} resync={} restartAfter={}",
                    cause.getCode(),
                    count,
                    position);
            Map<String, BsonTimestamp> anyTime = new HashMap<>();
            policies.forEach(p -> anyTime.put(p.namespace(), ANY_TIME));
            modes.saveFollower(null, lease, state.withChanging(anyTime));
            FollowerResync progress = new FollowerResync(count, started, null, reason, 0, 0);
            modes.saveFollowerResync(null, lease, progress);
            faults.reached(FaultPoint.FOLLOWER_RESYNC_POSITION_TAKEN);
            for (CollectionPolicy policy : policies) {
                progress = resyncNamespace(policy, progress);
            }
            BsonTimestamp copiedBy = follower.archiveMajorityTime();
            Map<String, BsonTimestamp> bounded = new HashMap<>(modes.follower().changing());
            policies.forEach(p -> bounded.put(p.namespace(), copiedBy));
            modes.saveFollower(
                    null, lease, modes.follower().resumingAfter(position).withChangingReset(bounded));
            progress = new FollowerResync(count, started, Instant.now(), reason, progress.copied(), progress.deleted());
            modes.saveFollowerResync(null, lease, progress);
            LOG.info(
                    "event=archive_follower_resynced resync={} copied={} deleted={} restartAfter={}",
                    count,
                    progress.copied(),
                    progress.deleted(),
                    position);
        } finally {
            metrics.resyncing.set(0);
        }
    }

    /**
     * Two passes: every fast-tier document is compared with the archive's (replaced, or deleted with a fence
     * when the archive has none), then every archive document inside the coverage bound (what the router
     * promises the fast tier holds) is copied if the fast tier lacks it or holds another version.
     */
    private FollowerResync resyncNamespace(CollectionPolicy policy, FollowerResync progress) {
        Namespace ns = Namespace.of(policy);
        var archived = archive.getDatabase(policy.database())
                .getCollection(policy.collection(), BsonDocument.class)
                .withReadConcern(ReadConcern.MAJORITY);
        // ids only; the fast tier holds the recent documents, so their ids fit in memory
        List<BsonValue> fastIds = new ArrayList<>();
        Blocking.list(ns.in(fast).find().projection(Projections.include("_id")))
                .forEach(d -> fastIds.add(d.get("_id")));
        for (int from = 0; from < fastIds.size(); from += ArchiveFollower.BATCH) {
            List<BsonValue> ids = fastIds.subList(from, Math.min(fastIds.size(), from + ArchiveFollower.BATCH));
            progress = reconcile(policy, ids, byId(archived.find(Filters.in("_id", ids))), progress);
        }
        Instant covered = store.namespace(policy.namespace()).oldestCovered();
        if (covered == null) {
            return progress; // the router promises nothing of this namespace yet
        }
        try (MongoCursor<BsonDocument> inCoverage = archived.find(AgeValue.atOrAfter(policy, covered))
                .batchSize(ArchiveFollower.BATCH)
                .iterator()) {
            List<BsonDocument> page = new ArrayList<>();
            while (inCoverage.hasNext()) {
                page.add(inCoverage.next());
                if (page.size() == ArchiveFollower.BATCH || !inCoverage.hasNext()) {
                    Map<BsonValue, BsonDocument> versions = byId(page);
                    progress = reconcile(policy, new ArrayList<>(versions.keySet()), versions, progress);
                    page.clear();
                }
            }
        }
        return progress;
    }

    /** Makes the fast tier's {@code ids} equal to {@code archived} (their archive versions; absent ones are deleted). */
    private FollowerResync reconcile(
            CollectionPolicy policy,
            List<BsonValue> ids,
            Map<BsonValue, BsonDocument> archived,
            FollowerResync progress) {
        if (!follower.leaseHeld()) {
            throw new StaleStateException("the archive follower lost its lease during a resync");
        }
        Namespace ns = Namespace.of(policy);
        Map<BsonValue, BsonDocument> current = byId(Blocking.list(ns.in(fast).find(Filters.in("_id", ids))));
        List<BsonValue> stale = new ArrayList<>();
        List<BsonValue> gone = new ArrayList<>();
        for (BsonValue id : ids) {
            BsonDocument version = archived.get(id);
            if (version == null && current.containsKey(id)) {
                gone.add(id);
            } else if (version != null && !version.equals(current.get(id))) {
                stale.add(id);
            }
        }
        if (stale.isEmpty() && gone.isEmpty()) {
            return progress;
        }
        FollowerResync next = new FollowerResync(
                progress.count(),
                progress.startedAt(),
                null,
                progress.reason(),
                progress.copied() + stale.size(),
                progress.deleted() + gone.size());
        ownWrites.inTransaction(session -> {
            modes.saveFollowerResync(session, lease, next); // the fence, as for a batch of events
            for (BsonValue id : stale) {
                Blocking.run(ns.in(fast)
                        .replaceOne(
                                session, Filters.eq("_id", id), archived.get(id), new ReplaceOptions().upsert(true)));
            }
            for (BsonValue id : gone) {
                follower.deleteFenced(session, policy.namespace(), id);
            }
            return null;
        });
        return next;
    }

    private static Map<BsonValue, BsonDocument> byId(Iterable<BsonDocument> documents) {
        Map<BsonValue, BsonDocument> out = new TreeMap<>(BsonOrder.COMPARATOR);
        documents.forEach(d -> out.put(d.get("_id"), d));
        return out;
    }
}
