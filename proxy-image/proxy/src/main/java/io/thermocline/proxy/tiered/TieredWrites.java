package io.thermocline.proxy.tiered;

import com.mongodb.MongoException;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.RoutingMetrics.Served;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.UserDeletes;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Writes on tiered namespaces, per {@link WriteRouter}: every user write lands in the fast tier (the
 * feeder mirrors it), after promoting the cold documents it touches, so the fast tier's own reply
 * carries the exact counts one database would give. Deletes go through the workers' tombstone path
 * ({@link UserDeletes}): fence and delete in one fast-tier transaction, so the feeder deletes the
 * archive copy and no copy-up in flight resurrects it.
 */
final class TieredWrites {

    private static final int RESOLVE_CANDIDATES = 100;
    private static final int MAX_TRANSACTION_ATTEMPTS = 40;

    private final MongoClient fast;
    private final MongoClient archive;
    private final Promotion promotion;
    private final MirrorBarrier barrier;
    private final Duration barrierTimeout;
    private final UserDeletes userDeletes;
    private final Fences fences;
    private final RetryableReplies replies;
    private final com.mongodb.reactivestreams.client.MongoCollection<BsonDocument> probes;
    private final String lockPrefix;
    private final Duration maxInFlight;
    private volatile RoutingMetrics metrics;

    TieredWrites(MongoClient fast, MongoClient archive, Promotion promotion, MirrorBarrier barrier, Duration barrierTimeout,
                 UserDeletes userDeletes, Fences fences, RetryableReplies replies, RoutingMetrics metrics,
                 io.thermocline.tiering.metadata.MetadataStore store, String instanceId, Duration fenceRetention) {
        this.probes = store.collection(io.thermocline.tiering.metadata.MetadataStore.PROBES);
        this.lockPrefix = "proxy-write/" + instanceId + "/";
        this.maxInFlight = fenceRetention.dividedBy(2);
        this.fast = fast;
        this.archive = archive;
        this.promotion = promotion;
        this.barrier = barrier;
        this.barrierTimeout = barrierTimeout;
        this.userDeletes = userDeletes;
        this.fences = fences;
        this.replies = replies;
        this.metrics = metrics;
    }

    void metrics(RoutingMetrics m) {
        this.metrics = m;
    }

    /** The barrier is shared with promotions and the transaction ledger: this counts all their waits. */
    void barrierWaitsIn(io.thermocline.tiering.metrics.BarrierWaits waits) {
        barrier.countingIn(waits);
    }

    RawBsonDocument serve(Exchange x, CommandClass.Write write, TieredRouting routing) throws InterruptedException {
        CollectionPolicy policy = x.table().policy(write.namespace()).orElseThrow();
        CoverageBound bound = x.table().coverage(write.namespace());
        Optional<RawBsonDocument> replayed = replies.replay(x);
        if (replayed.isPresent()) {
            return replayed.get();
        }
        return switch (write.kind()) {
            case INSERT -> insert(x, write, policy, bound, routing);
            case UPDATE -> update(x, write, policy, bound, routing);
            case DELETE -> delete(x, write, policy, bound, routing);
            case FIND_AND_MODIFY -> findAndModify(x, write, policy, bound, routing);
        };
    }

    // ---- insert ----------------------------------------------------------------------------

    /**
     * One archive lookup for all client-chosen {@code _id}s of the command (none when every route is
     * provably hot); only an archived {@code _id} is promoted, so the fast tier's unique index then
     * answers a duplicate as one database would.
     */
    private RawBsonDocument insert(Exchange x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound,
                                   TieredRouting routing) throws InterruptedException {
        List<BsonValue> maybeArchived = new ArrayList<>();
        Reason reason = null;
        for (BsonDocument document : write.statements()) {
            WriteRoute route = WriteRouter.insert(document, policy, bound);
            if (route instanceof WriteRoute.PointWrite point) {
                maybeArchived.add(point.id());
                reason = route.reason();
            } else if (reason == null) {
                reason = route.reason();
            }
        }
        metrics.decided("write", Served.FAST, reason == null ? Reason.INSERT_SERVER_ASSIGNS_ID : reason);
        if (!maybeArchived.isEmpty()) {
            Set<BsonValue> archived = Promotion.idsIn(archive, write.namespace(), maybeArchived);
            if (!archived.isEmpty()) {
                // rare (a duplicate _id): insert in a transaction that also checks the promoted copies are still there
                return guarded(x, write.namespace(), Replies.mutable(x.command()), new ArrayList<>(archived), routing);
            }
        }
        return routing.fast(x, x.msg());
    }

    // ---- update ----------------------------------------------------------------------------

    private RawBsonDocument update(Exchange x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound,
                                   TieredRouting routing) throws InterruptedException {
        List<BsonDocument> sent = new ArrayList<>();
        List<BsonValue> touched = new ArrayList<>();
        boolean synced = false;
        for (BsonDocument statement : write.statements()) {
            WriteRoute route = WriteRouter.update(statement, policy, bound);
            count(route);
            BsonDocument filter = statement.isDocument("q") ? statement.getDocument("q") : new BsonDocument();
            if (route instanceof WriteRoute.PointWrite point) {
                touched.add(point.id());
            } else if (route instanceof WriteRoute.ResolveOneThenPointWrite resolve) {
                if (!synced) {
                    sync();
                    synced = true;
                }
                BsonValue id = firstInArchive(write.namespace(), resolve.filter(), resolve.sort());
                if (id != null) {
                    touched.add(id);
                    statement = Replies.mutable(statement);
                    statement.put("q", restricted(filter, id));
                } else {
                    resolve.upsertId().ifPresent(touched::add);
                }
            } else if (route instanceof WriteRoute.BothTiers both) {
                // fast tier first, then archive: a matching document is in the fast tier at the first read, or
                // was evicted before it and the archive holds its latest version at the second
                touched.addAll(idsIn(fast, write.namespace(), filter, 0));
                touched.addAll(idsInArchive(write.namespace(), filter, 0));
                both.upsertId().ifPresent(touched::add);
            }
            sent.add(statement);
        }
        if (touched.isEmpty()) {
            return routing.fast(x, x.msg());
        }
        BsonDocument command = Replies.mutable(x.command());
        command.put("updates", new BsonArray(sent));
        return guarded(x, write.namespace(), command, touched, routing);
    }

    // ---- delete ----------------------------------------------------------------------------

    private RawBsonDocument delete(Exchange x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound,
                                   TieredRouting routing) {
        long deleted = 0;
        for (BsonDocument statement : write.statements()) {
            WriteRoute route = WriteRouter.delete(statement, policy, bound);
            count(route);
            BsonDocument filter = statement.isDocument("q") ? statement.getDocument("q") : new BsonDocument();
            boolean single = statement.isNumber("limit") && statement.getNumber("limit").intValue() == 1;
            List<BsonValue> targets = targets(write.namespace(), filter, single, !(route instanceof WriteRoute.FastTier));
            deleted += deleteWithTombstones(x, write.namespace(), targets, routing);
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32((int) deleted)).append("ok", new BsonDouble(1));
        return replies.remember(x, OpMsg.raw(reply));
    }

    /**
     * The documents a delete removes: those matching in the fast tier, plus (unless provably hot) those
     * matching in the archive that the fast tier does not hold and no user deleted since; such a
     * document's archive version is its latest (the evictor only removes documents the archive holds
     * identically).
     */
    private List<BsonValue> targets(String namespace, BsonDocument filter, boolean single, boolean archiveToo) {
        Set<BsonValue> ids = new LinkedHashSet<>(idsIn(fast, namespace, filter, single ? 1 : 0));
        if (!archiveToo || (single && !ids.isEmpty())) {
            return new ArrayList<>(ids);
        }
        List<BsonValue> candidates = idsInArchive(namespace, filter, single ? RESOLVE_CANDIDATES : 0);
        if (!candidates.isEmpty()) {
            Set<BsonValue> held = Promotion.idsIn(fast, namespace, candidates);
            Map<BsonValue, Fence> fenced = fences.read(null, namespace, candidates);
            for (BsonValue id : candidates) {
                Fence fence = fenced.get(id);
                if (!held.contains(id) && (fence == null || fence.kind() != Fence.Kind.USER_DELETE)) {
                    ids.add(id);
                    if (single) {
                        break;
                    }
                }
            }
        }
        return new ArrayList<>(ids);
    }

    /** Fence and delete of every target in one fast-tier transaction; returns how many documents were deleted. */
    private long deleteWithTombstones(Exchange x, String namespace, List<BsonValue> ids, TieredRouting routing) {
        if (ids.isEmpty()) {
            return 0;
        }
        inTransaction(x, routing, session -> {
            for (BsonValue id : ids) {
                userDeletes.deleteInSession(session, namespace, id);
            }
            return null;
        });
        return ids.size();
    }

    // ---- findAndModify ---------------------------------------------------------------------

    private RawBsonDocument findAndModify(Exchange x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound,
                                          TieredRouting routing) throws InterruptedException {
        BsonDocument command = write.statements().get(0);
        WriteRoute route = WriteRouter.findAndModify(command, policy, bound);
        count(route);
        BsonDocument query = command.isDocument("query") ? command.getDocument("query") : new BsonDocument();
        BsonDocument sort = command.isDocument("sort") ? command.getDocument("sort") : new BsonDocument();
        boolean remove = command.getBoolean("remove", BsonBoolean.FALSE).getValue();
        if (remove) {
            return removeOne(x, write.namespace(), route, query, sort, command, routing);
        }
        if (route instanceof WriteRoute.PointWrite point) {
            return guarded(x, write.namespace(), Replies.mutable(x.command()), List.of(point.id()), routing);
        }
        if (route instanceof WriteRoute.ResolveOneThenPointWrite resolve) {
            sync();
            BsonValue id = firstInArchive(write.namespace(), query, sort);
            if (id != null) {
                BsonDocument rewritten = Replies.mutable(x.command());
                rewritten.put("query", restricted(query, id));
                return guarded(x, write.namespace(), rewritten, List.of(id), routing);
            }
            if (resolve.upsertId().isPresent()) {
                return guarded(x, write.namespace(), Replies.mutable(x.command()), List.of(resolve.upsertId().get()), routing);
            }
        }
        return routing.fast(x, x.msg());
    }

    private RawBsonDocument removeOne(Exchange x, String namespace, WriteRoute route, BsonDocument query, BsonDocument sort,
                                      BsonDocument command, TieredRouting routing) throws InterruptedException {
        BsonValue id;
        if (route instanceof WriteRoute.FastTier) {
            id = first(fast, namespace, query, sort);
        } else if (route instanceof WriteRoute.ResolveOneThenPointWrite) {
            sync();
            id = firstInArchive(namespace, query, sort);
        } else {
            List<BsonValue> targets = targets(namespace, query, true, true);
            id = targets.isEmpty() ? null : targets.get(0);
        }
        BsonDocument value = null;
        for (int attempt = 1; id != null && value == null && attempt <= 3; attempt++) {
            // a promoted document can be evicted again before the delete: promote and try again
            promotion.ensureInFast(namespace, List.of(id));
            BsonDocument fields = command.isDocument("fields") ? command.getDocument("fields") : null;
            BsonValue target = id;
            value = inTransaction(x, routing, session -> {
                BsonDocument removed = Blocking.single(Promotion.collection(fast, namespace).findOneAndDelete(session,
                        Filters.and(query, Filters.eq("_id", target)),
                        new FindOneAndDeleteOptions().projection(fields))).orElse(null);
                if (removed != null) {
                    fences.write(session, namespace, target, Fence.Kind.USER_DELETE);
                }
                return removed;
            });
        }
        BsonDocument reply = new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(value == null ? 0 : 1)))
                .append("value", value == null ? BsonNull.VALUE : value)
                .append("ok", new BsonDouble(1));
        return replies.remember(x, OpMsg.raw(reply));
    }

    // ---- guarded writes ----------------------------------------------------------------

    /** Fields of a client command that belong to the client's session, not to the proxy's transaction. */
    private static final Set<String> SESSION_FIELDS = Set.of("lsid", "txnNumber", "autocommit", "startTransaction", "$db",
            "$clusterTime", "$readPreference", "readConcern", "writeConcern", "apiVersion", "apiStrict", "apiDeprecationErrors");

    /**
     * A write on documents that may be cold: the client's command runs in a fast-tier transaction that
     * first copies the archived versions of the documents the fast tier lacks, under the workers'
     * copy-up rule ({@link CopyUpDecision}: fences read before the sync barrier and the archive read,
     * compared inside the transaction; never over a fast-tier version), and checks that the documents the
     * fast tier held are still there. Copy and write are one transaction, so the evictor cannot remove a
     * promoted document in between (a separate promotion would race it and the write would miss the
     * document); the copies are mirrored with the write as the archive's own versions, which is harmless.
     * The server's own reply, counts included, is what the client gets.
     */
    private RawBsonDocument guarded(Exchange x, String namespace, BsonDocument command, List<BsonValue> ids,
                                    TieredRouting routing) throws InterruptedException {
        BsonDocument cmd = new BsonDocument();
        command.forEach((k, v) -> {
            if (!SESSION_FIELDS.contains(k)) {
                cmd.append(k, v);
            }
        });
        String database = new com.mongodb.MongoNamespace(namespace).getDatabaseName();
        List<BsonValue> distinct = new ArrayList<>(new LinkedHashSet<>(ids));
        for (int attempt = 1; ; attempt++) {
            long started = System.nanoTime();
            Map<BsonValue, Fence> fencesAtRead = fences.read(null, namespace, distinct);
            Set<BsonValue> held = Promotion.idsIn(fast, namespace, distinct);
            List<BsonValue> missing = new ArrayList<>();
            for (BsonValue id : distinct) {
                if (!held.contains(id)) {
                    missing.add(id);
                }
            }
            Map<BsonValue, BsonDocument> archived = new java.util.HashMap<>();
            if (!missing.isEmpty() && !Promotion.idsIn(archive, namespace, missing).isEmpty()) {
                sync(); // the archive now reflects every fast-tier delete older than the fences read above
                for (BsonDocument d : Blocking.list(Promotion.collection(archive, namespace).find(Filters.in("_id", missing)))) {
                    archived.put(d.get("_id"), d);
                }
            }
            Optional<BsonDocument> reply = inTransactionUnless(x, routing, session -> {
                takeWriteLock(session);
                List<BsonValue> copied = copyMissing(session, namespace, archived, fencesAtRead, started);
                if (copied == null) {
                    return null;
                }
                List<BsonValue> mustExist = new ArrayList<>(held);
                mustExist.addAll(copied);
                if (!restoreEvicted(session, namespace, held)) {
                    return null;
                }
                BsonDocument answer;
                try {
                    answer = Blocking.single(fast.getDatabase(database).runCommand(session, cmd, BsonDocument.class)).orElseThrow();
                } catch (com.mongodb.MongoCommandException e) {
                    if (e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                        throw e;
                    }
                    return new Outcome(e.getResponse(), false);
                }
                boolean failed = answer.containsKey("writeErrors") || answer.containsKey("writeConcernError");
                if (!failed && !allPresent(session, namespace, mustExist)) {
                    // removed between the check and the write (a server without snapshot reads in transactions)
                    return null;
                }
                return new Outcome(answer, !failed);
            });
            if (reply.isPresent()) {
                return replies.remember(x, OpMsg.raw(reply.get()));
            }
            if (attempt >= 8) {
                throw new TierLagging("documents of " + namespace + " kept changing tier while this write promoted them; retry");
            }
        }
    }

    /**
     * The first statement of a guarded transaction is a write, so the transaction holds its place before
     * it checks anything (one probe document per thread: concurrent guarded writes do not conflict on it).
     */
    private void takeWriteLock(ClientSession session) {
        Blocking.run(probes.updateOne(session, Filters.eq("_id", lockPrefix + Thread.currentThread().getId()),
                com.mongodb.client.model.Updates.inc("seq", 1L), new com.mongodb.client.model.UpdateOptions().upsert(true)));
    }

    /**
     * Documents the fast tier held at the check but the evictor removed since: the evictor removes only a
     * document the archive holds identically (and leaves an EVICTION fence), so the archive's version is
     * the latest and is copied back here; a user delete (USER_DELETE fence) stays deleted. False when a
     * document vanished without a fence, so the attempt starts over.
     */
    private boolean restoreEvicted(ClientSession session, String namespace, Set<BsonValue> held) {
        if (held.isEmpty()) {
            return true;
        }
        Set<BsonValue> present = Promotion.idsIn(fast, session, namespace, new ArrayList<>(held));
        List<BsonValue> vanished = new ArrayList<>();
        for (BsonValue id : held) {
            if (!present.contains(id)) {
                vanished.add(id);
            }
        }
        if (vanished.isEmpty()) {
            return true;
        }
        Map<BsonValue, Fence> fenced = fences.read(session, namespace, vanished);
        List<BsonValue> evicted = new ArrayList<>();
        for (BsonValue id : vanished) {
            Fence fence = fenced.get(id);
            if (fence == null) {
                return false;
            }
            if (fence.kind() == Fence.Kind.EVICTION) {
                evicted.add(id);
            }
        }
        if (evicted.isEmpty()) {
            return true;
        }
        List<BsonDocument> copies = Blocking.list(Promotion.collection(archive, namespace).find(Filters.in("_id", evicted)));
        if (copies.size() != evicted.size()) {
            return false;
        }
        Blocking.run(Promotion.collection(fast, namespace).insertMany(session, copies));
        return true;
    }

    private boolean allPresent(ClientSession session, String namespace, List<BsonValue> ids) {
        return ids.isEmpty() || Promotion.idsIn(fast, session, namespace, ids).size() == new LinkedHashSet<>(ids).size();
    }

    /** Copies the archived versions the copy-up rule allows; returns their ids, or null when the attempt must start again. */
    private List<BsonValue> copyMissing(ClientSession session, String namespace, Map<BsonValue, BsonDocument> archived,
                                Map<BsonValue, Fence> fencesAtRead, long started) {
        if (archived.isEmpty()) {
            return List.of();
        }
        List<BsonValue> candidates = new ArrayList<>(archived.keySet());
        Map<BsonValue, Fence> fencesNow = fences.read(session, namespace, candidates);
        Set<BsonValue> present = Promotion.idsIn(fast, session, namespace, candidates);
        Duration inFlight = Duration.ofNanos(System.nanoTime() - started);
        List<BsonDocument> copies = new ArrayList<>();
        for (BsonValue id : candidates) {
            CopyUpDecision decision = CopyUpDecision.decide(fencesAtRead.get(id), fencesNow.get(id), true, present.contains(id),
                    inFlight, maxInFlight);
            if (decision == CopyUpDecision.COPY) {
                copies.add(archived.get(id));
            } else if (decision == CopyUpDecision.SKIP_TOO_SLOW || decision == CopyUpDecision.SKIP_DELETED_SINCE_READ
                    && fencesNow.get(id).kind() != Fence.Kind.USER_DELETE) {
                return null;
            }
        }
        if (!copies.isEmpty()) {
            Blocking.run(Promotion.collection(fast, namespace).insertMany(session, copies));
        }
        List<BsonValue> ids = new ArrayList<>();
        copies.forEach(d -> ids.add(d.get("_id")));
        return ids;
    }

    /** What the guarded transaction decided: commit (the write stands) or abort (an error reply, nothing applied). */
    private record Outcome(BsonDocument reply, boolean commit) {
    }

    /** Runs {@code body} in a transaction; empty (aborted) when it returns null, so the caller retries. */
    private Optional<BsonDocument> inTransactionUnless(Exchange x, TieredRouting routing, InSession<Outcome> body) {
        for (int attempt = 1; ; attempt++) {
            ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
            try {
                session.startTransaction(TransactionOptions.builder()
                        .readConcern(com.mongodb.ReadConcern.LOCAL).writeConcern(WriteConcern.MAJORITY).build());
                Outcome outcome = body.apply(session);
                if (outcome == null || !outcome.commit()) {
                    abortQuietly(session);
                    return outcome == null ? Optional.empty() : Optional.of(outcome.reply());
                }
                Blocking.run(session.commitTransaction());
                routing.observed(x, session.getOperationTime());
                return Optional.of(outcome.reply());
            } catch (MongoException e) {
                abortQuietly(session);
                if (e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                    backOff(attempt);
                    continue;
                }
                throw e;
            } finally {
                session.close();
            }
        }
    }

    /**
     * A write conflict with a worker's transaction (warm copy, eviction) clears once it commits: wait a
     * little longer each time; past the bound the client gets a retryable error.
     */
    private static void backOff(int attempt) {
        if (attempt >= MAX_TRANSACTION_ATTEMPTS) {
            throw new TierLagging("the write kept conflicting with Thermocline's own transactions on the fast tier; retry");
        }
        try {
            Thread.sleep(Math.min(200, 5L * attempt));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TierLagging("interrupted while retrying a write after a conflict");
        }
    }

    private static void abortQuietly(ClientSession session) {
        if (session.hasActiveTransaction()) {
            try {
                Blocking.run(session.abortTransaction());
            } catch (RuntimeException ignored) {
                // nothing was committed; the server drops the transaction
            }
        }
    }

    // ---- helpers ---------------------------------------------------------------------------

    private interface InSession<T> {
        T apply(ClientSession session);
    }

    /**
     * A user transaction on the fast tier (not marked as Thermocline's own: the feeder mirrors it). Read
     * concern stays the default: the presence checks must see the same data the transaction's writes do.
     */
    private <T> T inTransaction(Exchange x, TieredRouting routing, InSession<T> body) {
        for (int attempt = 1; ; attempt++) {
            ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
            try {
                session.startTransaction(TransactionOptions.builder()
                        .readConcern(com.mongodb.ReadConcern.LOCAL).writeConcern(WriteConcern.MAJORITY).build());
                T result = body.apply(session);
                Blocking.run(session.commitTransaction());
                routing.observed(x, session.getOperationTime());
                return result;
            } catch (MongoException e) {
                if (session.hasActiveTransaction()) {
                    try {
                        Blocking.run(session.abortTransaction());
                    } catch (RuntimeException ignored) {
                        // nothing was committed; the server drops the transaction
                    }
                }
                if (e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                    backOff(attempt);
                    continue;
                }
                throw e;
            } finally {
                session.close();
            }
        }
    }

    private void count(WriteRoute route) {
        Served served = route instanceof WriteRoute.FastTier || route instanceof WriteRoute.PointWrite ? Served.FAST
                : route instanceof WriteRoute.Archive ? Served.ARCHIVE : Served.BOTH;
        metrics.decided("write", served, route.reason());
    }

    /** The sync barrier: the archive then holds the latest version of every document written before now. */
    private void sync() throws InterruptedException {
        if (barrier.sync(barrierTimeout).isEmpty()) {
            throw new TierLagging("the feeder did not mirror the fast tier within " + barrierTimeout.toMillis()
                    + " ms, so the archive cannot resolve this write yet; retry the operation");
        }
    }

    private static BsonDocument restricted(BsonDocument filter, BsonValue id) {
        return new BsonDocument("$and", new BsonArray(List.of(filter, new BsonDocument("_id", id))));
    }

    private BsonValue firstInArchive(String namespace, BsonDocument filter, BsonDocument sort) {
        return first(archive, namespace, filter, sort);
    }

    private static BsonValue first(MongoClient client, String namespace, BsonDocument filter, BsonDocument sort) {
        return Blocking.single(Promotion.collection(client, namespace).find(filter).sort(sort).limit(1)
                .projection(Projections.include("_id")).first()).map(d -> d.get("_id")).orElse(null);
    }

    private List<BsonValue> idsInArchive(String namespace, BsonDocument filter, int limit) {
        return idsIn(archive, namespace, filter, limit);
    }

    private static List<BsonValue> idsIn(MongoClient client, String namespace, BsonDocument filter, int limit) {
        List<BsonValue> ids = new ArrayList<>();
        for (BsonDocument d : Blocking.list(Promotion.collection(client, namespace).find(filter).limit(limit)
                .projection(Projections.include("_id")))) {
            ids.add(d.get("_id"));
        }
        return ids;
    }
}
