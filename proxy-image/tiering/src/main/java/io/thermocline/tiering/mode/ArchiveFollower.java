package io.thermocline.tiering.mode;

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
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.WorkerLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the fast tier in step with the archive while the archive is authoritative (shadow, a cutover,
 * drained): tails the archive's change stream on the tiered namespaces and applies each change to the
 * fast tier in a marked transaction ({@link OwnWrites}), so the feeder never mirrors it back. A delete
 * writes a fence as a user delete does, so a warm copy in flight cannot resurrect the document.
 *
 * <p>It reports {@code appliedThrough}: every archive change up to that time is in the fast tier. It
 * knows because it reads the archive's majority time first and then drains the stream until a getMore
 * comes back empty ({@code tryNext}). During a cutover it applies nothing after the document's
 * {@code cutoverAt}; in the tiered phases it does nothing (the feeder's own mirror writes would come
 * back as archive changes and could overwrite newer fast-tier versions).
 */
public final class ArchiveFollower implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ArchiveFollower.class);
    private static final int BATCH = 100;

    private final MongoClient fast;
    private final com.mongodb.client.MongoClient archive;
    private final List<CollectionPolicy> policies;
    private final ModeStore modes;
    private final OwnWrites ownWrites;
    private final Fences fences;
    private final Duration idle;
    private final WorkerLoop loop;
    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor;
    private BsonTimestamp cursorOrigin;
    private volatile long applied;

    public ArchiveFollower(MongoClient fast, com.mongodb.client.MongoClient archive, List<CollectionPolicy> policies,
                           String instanceId, Duration idle) {
        this.fast = fast;
        this.archive = archive;
        this.policies = List.copyOf(policies);
        MetadataStore store = new MetadataStore(fast);
        this.modes = new ModeStore(store);
        this.ownWrites = new OwnWrites(fast, store, "follower/" + instanceId);
        this.fences = new Fences(store);
        this.idle = idle;
        this.loop = new WorkerLoop("archive-follower", this::round, idle.multipliedBy(5));
    }

    public ArchiveFollower start() {
        loop.start();
        return this;
    }

    /** Changes applied to the fast tier so far. */
    public long applied() {
        return applied;
    }

    /** One pass: everything the archive committed up to now, or nothing outside the archive-authoritative phases. */
    Duration round() {
        ModeDocument mode = modes.read();
        if (!mode.exists() || !mode.phase().archiveAuthoritative() || mode.followFrom() == null) {
            closeCursor();
            return idle;
        }
        FollowerState state = modes.follower();
        if (!mode.followFrom().equals(state.origin())) {
            // a new drain point: the fast tier equals the archive up to it, start from there
            closeCursor();
            state = new FollowerState(mode.followFrom(), null, mode.followFrom(), Map.of());
            modes.saveFollower(state);
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
            if (limit != null && event.getClusterTime() != null && event.getClusterTime().compareTo(limit) > 0) {
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
            state = state.applied(cursor.getResumeToken(), through);
            modes.saveFollower(state);
        }
        return reachedLimit ? idle.multipliedBy(2) : idle;
    }

    private FollowerState apply(FollowerState state, List<ChangeStreamDocument<BsonDocument>> events) {
        if (events.isEmpty()) {
            return state;
        }
        Map<String, BsonTimestamp> changing = new HashMap<>();
        for (ChangeStreamDocument<BsonDocument> e : events) {
            if (e.getNamespace() != null && e.getClusterTime() != null) {
                changing.merge(e.getNamespace().getFullName(), e.getClusterTime(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
            }
        }
        // announce before applying: a shadow comparison reading this after its fast-tier read sees every change it may have met
        FollowerState announced = state.withChanging(changing);
        modes.saveFollower(announced);
        ownWrites.inTransaction(session -> {
            for (ChangeStreamDocument<BsonDocument> e : events) {
                applyOne(session, e);
            }
            return null;
        });
        applied += events.size();
        BsonTimestamp last = events.get(events.size() - 1).getClusterTime();
        FollowerState next = announced.applied(events.get(events.size() - 1).getResumeToken(),
                last == null ? announced.appliedThrough() : last);
        modes.saveFollower(next);
        return next;
    }

    private void applyOne(com.mongodb.reactivestreams.client.ClientSession session, ChangeStreamDocument<BsonDocument> e) {
        if (e.getNamespace() == null || e.getDocumentKey() == null) {
            return;
        }
        String ns = e.getNamespace().getFullName();
        var collection = Namespace.parse(ns).in(fast);
        OperationType type = e.getOperationType();
        if (type == OperationType.DELETE) {
            fences.write(session, ns, e.getDocumentKey().get("_id"), Fence.Kind.USER_DELETE);
            Blocking.run(collection.deleteOne(session, Filters.eq("_id", e.getDocumentKey().get("_id"))));
        } else if (type == OperationType.INSERT || type == OperationType.REPLACE || type == OperationType.UPDATE) {
            BsonDocument full = e.getFullDocument();
            if (full != null) { // null: deleted since; its delete event follows
                Blocking.run(collection.replaceOne(session, Filters.eq("_id", full.get("_id")), full, new ReplaceOptions().upsert(true)));
            }
        } else {
            LOG.warn("event=archive_follower_ignored operation={} namespace={}", type, ns);
        }
    }

    private void open(FollowerState state) {
        closeCursor();
        List<Bson> namespaces = new ArrayList<>();
        for (CollectionPolicy p : policies) {
            namespaces.add(Filters.and(Filters.eq("ns.db", p.database()), Filters.eq("ns.coll", p.collection())));
        }
        ChangeStreamIterable<BsonDocument> stream = archive.watch(List.of(Aggregates.match(Filters.or(namespaces))), BsonDocument.class)
                .fullDocument(FullDocument.UPDATE_LOOKUP).maxAwaitTime(50, java.util.concurrent.TimeUnit.MILLISECONDS);
        if (state.resumeToken() != null) {
            stream = stream.resumeAfter(state.resumeToken());
        } else {
            BsonTimestamp from = state.appliedThrough();
            stream = stream.startAtOperationTime(new BsonTimestamp(from.getTime(), from.getInc() + 1));
        }
        cursor = stream.cursor();
        cursorOrigin = state.origin();
        LOG.info("event=archive_follower_started origin={} resumed={}", state.origin(), state.resumeToken() != null);
    }

    private BsonTimestamp archiveMajorityTime() {
        try (ClientSession session = archive.startSession()) {
            CollectionPolicy first = policies.get(0);
            archive.getDatabase(first.database()).getCollection(first.collection(), BsonDocument.class)
                    .withReadConcern(com.mongodb.ReadConcern.MAJORITY)
                    .find(session, Filters.eq("_id", new BsonDocument("thermoclineNoSuchId", new org.bson.BsonInt32(1)))).limit(1).first();
            BsonTimestamp time = session.getOperationTime();
            if (time == null) {
                throw new IllegalStateException("the archive returned no operationTime: it must be a replica set to be followed");
            }
            return time;
        }
    }

    private void closeCursor() {
        if (cursor != null) {
            try {
                cursor.close();
            } catch (RuntimeException ignored) {
                // the next round opens a new one
            }
            cursor = null;
        }
    }

    @Override
    public void close() {
        loop.close();
        closeCursor();
    }
}
