package io.thermocline.proxy.tiered;

import com.mongodb.MongoException;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.command.MongoError;
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
 * feeder mirrors it). A write that may touch cold documents runs in one guarded fast-tier transaction
 * that copies them in first, so the fast tier's own reply carries the exact counts one database would
 * give. Deletes decide their targets inside their transaction and leave a {@code USER_DELETE} fence per
 * document ({@link UserDeletes}), so the feeder deletes the archive copy; every copy claims the fences of
 * what it copies ({@link Fences#claim}), so a copy and a delete of one document conflict instead of both
 * committing. Replies of writes the proxy executes itself are recorded for retries in the same
 * transaction ({@link RetryableReplies}).
 */
final class TieredWrites {

    private static final int RESOLVE_CANDIDATES = 100;
    /** Documents per transaction of a multi-document write split over several (transaction size limits). */
    private static final int CHUNK = 1000;
    private static final int MAX_RESOLVE_ATTEMPTS = 8;
    private static final int MAX_TRANSACTION_ATTEMPTS = 40;

    private final MongoClient fast;
    private final MongoClient archive;
    private final MirrorBarrier barrier;
    private final Duration barrierTimeout;
    private final UserDeletes userDeletes;
    private final Fences fences;
    private final RetryableReplies replies;
    private final com.mongodb.reactivestreams.client.MongoCollection<BsonDocument> probes;
    private final String lockPrefix;
    private final Duration maxInFlight;
    private volatile RoutingMetrics metrics;

    TieredWrites(MongoClient fast, MongoClient archive, MirrorBarrier barrier, Duration barrierTimeout,
                 UserDeletes userDeletes, Fences fences, RetryableReplies replies, RoutingMetrics metrics,
                 io.thermocline.tiering.metadata.MetadataStore store, String instanceId, Duration fenceRetention) {
        this.probes = store.collection(io.thermocline.tiering.metadata.MetadataStore.PROBES);
        this.lockPrefix = "proxy-write/" + instanceId + "/";
        this.maxInFlight = fenceRetention.dividedBy(2);
        this.fast = fast;
        this.archive = archive;
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
        replies.ensureCollection();
        // An insert is retried on the same path (only a user delete of an archived _id changes it, and the
        // guarded path replays in its transaction), so the hot path of new documents pays no extra read.
        // Other writes may change path between attempts (coverage moved, a match left the archive).
        Optional<RawBsonDocument> replayed = write.kind() == CommandClass.WriteKind.INSERT ? Optional.empty() : replies.replay(x);
        if (replayed.isPresent()) {
            return replayed.get();
        }
        try {
            return switch (write.kind()) {
                case INSERT -> insert(x, write, policy, bound, routing);
                case UPDATE -> update(x, write, policy, bound, routing);
                case DELETE -> delete(x, write, policy, bound, routing);
                case FIND_AND_MODIFY -> findAndModify(x, write, policy, bound, routing);
            };
        } catch (Replayed recorded) {
            return recorded.reply;
        }
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
            BsonDocument filter = documentOrEmpty(statement, "q");
            Collation collation = collation(statement);
            if (route instanceof WriteRoute.PointWrite point) {
                touched.add(point.id());
            } else if (route instanceof WriteRoute.ResolveOneThenPointWrite resolve) {
                if (!synced) {
                    sync();
                    synced = true;
                }
                BsonValue id = first(archive, write.namespace(), resolve.filter(), resolve.sort(), collation);
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
                touched.addAll(idsIn(fast, write.namespace(), filter, collation, 0));
                touched.addAll(idsIn(archive, write.namespace(), filter, collation, 0));
                both.upsertId().ifPresent(touched::add);
            }
            sent.add(statement);
        }
        if (touched.isEmpty()) {
            return routing.fast(x, x.msg());
        }
        BsonDocument command = Replies.mutable(x.command());
        command.put("updates", new BsonArray(sent));
        List<BsonValue> distinct = new ArrayList<>(new LinkedHashSet<>(touched));
        if (distinct.size() > CHUNK) {
            BsonDocument only = sent.size() == 1 ? sent.get(0) : null;
            boolean splittable = only != null && flag(only, "multi") && !flag(only, "upsert") && !x.traits().retryableWrite();
            if (!splittable) {
                return MongoError.TRANSACTION_TOO_LARGE.reply("this update may change " + distinct.size()
                        + " documents of " + write.namespace() + " that are not all in the fast tier; Thermocline applies such a"
                        + " write in one fast-tier transaction, limited to " + CHUNK + " documents, and only a single multi-document"
                        + " update without upsert is split into several. Nothing was changed: narrow the filter (e.g. by "
                        + policy.ageField() + ") or send one updateMany per statement", List.of());
            }
            return updateInChunks(x, write.namespace(), command, only, distinct, routing);
        }
        return guarded(x, write.namespace(), command, touched, routing);
    }

    /**
     * A multi-document update over more documents than one transaction should hold: one guarded
     * transaction per chunk of the documents it may change (its filter restricted to them). One
     * database does not apply an updateMany atomically either (it yields between documents, and
     * concurrent readers see it half done), and drivers do not retry it. Counts are summed; a write
     * error stops it there, as it would stop one database's.
     */
    private RawBsonDocument updateInChunks(Exchange x, String namespace, BsonDocument command, BsonDocument statement,
                                           List<BsonValue> ids, TieredRouting routing) throws InterruptedException {
        long n = 0;
        long modified = 0;
        BsonDocument filter = documentOrEmpty(statement, "q");
        for (int from = 0; from < ids.size(); from += CHUNK) {
            List<BsonValue> chunk = ids.subList(from, Math.min(ids.size(), from + CHUNK));
            BsonDocument part = Replies.mutable(statement);
            part.put("q", restricted(filter, chunk));
            BsonDocument partCommand = Replies.mutable(command);
            partCommand.put("updates", new BsonArray(List.of(part)));
            RawBsonDocument reply = guarded(x, namespace, partCommand, chunk, routing);
            if (!Replies.isOk(reply)) {
                return reply;
            }
            n += reply.getNumber("n", new BsonInt32(0)).longValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).longValue();
            if (reply.isArray("writeErrors") && !reply.getArray("writeErrors").isEmpty()) {
                BsonDocument stopped = Replies.mutable(reply);
                stopped.put("n", new BsonInt32((int) n));
                stopped.put("nModified", new BsonInt32((int) modified));
                return OpMsg.raw(stopped);
            }
        }
        return OpMsg.raw(new BsonDocument("n", new BsonInt32((int) n)).append("nModified", new BsonInt32((int) modified))
                .append("ok", new BsonDouble(1)));
    }

    private static boolean flag(BsonDocument statement, String key) {
        BsonValue v = statement.get(key);
        return v != null && (v.isBoolean() ? v.asBoolean().getValue() : v.isNumber() && v.asNumber().intValue() != 0);
    }

    // ---- delete ----------------------------------------------------------------------------

    /** One statement of a delete command, as routed. */
    private record DeleteStatement(BsonDocument filter, Collation collation, boolean single, boolean archiveToo) {
    }

    /**
     * The archive's candidates for a statement: documents matching there, read again after their
     * fences were read (so an eviction after that read shows in the transaction as a changed fence).
     */
    private record Resolved(DeleteStatement statement, List<BsonValue> candidates, Map<BsonValue, Fence> fencesAtRead) {
    }

    /** What one delete transaction removed: documents the fast tier held, and documents only the archive held. */
    private record Deleted(long fastTier, long archiveOnly) {
        long n() {
            return fastTier + archiveOnly;
        }
    }

    /**
     * A delete runs in fast-tier transactions that decide its targets themselves (so a copy-up that
     * commits while the delete resolves cannot hide a document from it), and {@code n} counts what
     * they deleted. Single-document statements (the retryable kind) run in one transaction with the
     * reply record; a multi-document statement runs in chunks of {@value #CHUNK} documents per
     * transaction (one database does not delete them atomically either, and drivers do not retry it).
     */
    private RawBsonDocument delete(Exchange x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound,
                                   TieredRouting routing) {
        List<DeleteStatement> statements = new ArrayList<>();
        for (BsonDocument statement : write.statements()) {
            WriteRoute route = WriteRouter.delete(statement, policy, bound);
            count(route);
            boolean single = statement.isNumber("limit") && statement.getNumber("limit").intValue() == 1;
            statements.add(new DeleteStatement(documentOrEmpty(statement, "q"), collation(statement), single,
                    !(route instanceof WriteRoute.FastTier)));
        }
        String namespace = write.namespace();
        if (statements.stream().allMatch(DeleteStatement::single)) {
            for (int attempt = 1; attempt <= MAX_RESOLVE_ATTEMPTS; attempt++) {
                List<Resolved> resolved = new ArrayList<>();
                for (DeleteStatement statement : statements) {
                    resolved.add(resolve(namespace, statement, null));
                }
                Optional<BsonDocument> reply = inTransactionUnless(x, x, routing, session -> {
                    long n = 0;
                    for (Resolved r : resolved) {
                        Deleted d = deleteInSession(session, namespace, r, 1);
                        if (d == null) {
                            return null;
                        }
                        n += d.n();
                    }
                    return new Outcome(deleteReply(n), true);
                });
                if (reply.isPresent()) {
                    return OpMsg.raw(reply.get());
                }
            }
            throw documentsKeptMoving(namespace);
        }
        long n = 0;
        for (DeleteStatement statement : statements) {
            n += deleteMany(x, namespace, statement, routing);
        }
        return OpMsg.raw(deleteReply(n));
    }

    private static TierLagging documentsKeptMoving(String namespace) {
        return new TierLagging("documents of " + namespace + " kept changing tier while this write ran; retry");
    }

    private static BsonDocument deleteReply(long n) {
        return new BsonDocument("n", new BsonInt32((int) n)).append("ok", new BsonDouble(1));
    }

    /**
     * A multi-document statement (not retryable): the archive's candidates chunk by chunk, each
     * transaction with up to a chunk of fast-tier matches, until the fast tier has no more.
     */
    private long deleteMany(Exchange x, String namespace, DeleteStatement statement, TieredRouting routing) {
        List<BsonValue> all = statement.archiveToo() ? idsIn(archive, namespace, statement.filter(), statement.collation(), 0) : List.of();
        long n = 0;
        int from = 0;
        while (true) {
            List<BsonValue> chunk = new ArrayList<>(all.subList(from, Math.min(all.size(), from + CHUNK)));
            from += chunk.size();
            Deleted d = deleteChunk(x, namespace, statement, chunk, routing);
            n += d.n();
            if (from >= all.size() && d.fastTier() < CHUNK) {
                return n;
            }
        }
    }

    private Deleted deleteChunk(Exchange x, String namespace, DeleteStatement statement, List<BsonValue> within, TieredRouting routing) {
        for (int attempt = 1; attempt <= MAX_RESOLVE_ATTEMPTS; attempt++) {
            Resolved r = resolve(namespace, statement, within);
            Deleted[] done = new Deleted[1];
            Optional<BsonDocument> reply = inTransactionUnless(x, null, routing, session -> {
                done[0] = deleteInSession(session, namespace, r, CHUNK);
                return done[0] == null ? null : new Outcome(deleteReply(done[0].n()), true);
            });
            if (reply.isPresent()) {
                return done[0];
            }
        }
        throw documentsKeptMoving(namespace);
    }

    /** The archive's candidates ({@code within}: only among these ids), with their fences read before the second archive read. */
    private Resolved resolve(String namespace, DeleteStatement statement, List<BsonValue> within) {
        if (!statement.archiveToo()) {
            return new Resolved(statement, List.of(), Map.of());
        }
        List<BsonValue> first = within != null ? within
                : idsIn(archive, namespace, statement.filter(), statement.collation(), statement.single() ? RESOLVE_CANDIDATES : 0);
        if (first.isEmpty()) {
            return new Resolved(statement, List.of(), Map.of());
        }
        Map<BsonValue, Fence> fenced = fences.read(null, namespace, first);
        List<BsonValue> confirmed = idsIn(archive, namespace, restricted(statement.filter(), first), statement.collation(), 0);
        return new Resolved(statement, confirmed, fenced);
    }

    /**
     * One statement's deletes inside the transaction; null when the attempt must start over. The fast
     * tier's matches (its versions are the latest) are deleted with a tombstone each. Then the archive's
     * other candidates: their fences are claimed first, so a copy-up of one of them that has not
     * committed conflicts with this transaction and one that committed is seen; a candidate the fast tier
     * now holds is deleted there if its version matches; one it does not hold is deleted by its tombstone
     * alone (the feeder deletes the archive copy), unless a user deleted it already, and the attempt
     * starts over when it was evicted since its archive read. A single delete claims one candidate at a time.
     */
    private Deleted deleteInSession(ClientSession session, String namespace, Resolved r, int fastLimit) {
        DeleteStatement statement = r.statement();
        long fastTier = 0;
        List<BsonValue> fastMatches = idsIn(fast, session, namespace, statement.filter(), statement.collation(), fastLimit);
        for (BsonValue id : fastMatches) {
            if (userDeletes.deleteInSession(session, namespace, id) == 0) {
                return null; // gone since read (the evictor): its tombstone would delete the archive copy uncounted
            }
            fastTier++;
            if (statement.single()) {
                return new Deleted(fastTier, 0);
            }
        }
        List<BsonValue> cold = new ArrayList<>(r.candidates());
        cold.removeAll(fastMatches);
        int step = statement.single() ? 1 : Math.max(1, cold.size());
        long archiveOnly = 0;
        for (int from = 0; from < cold.size(); from += step) {
            List<BsonValue> part = cold.subList(from, Math.min(cold.size(), from + step));
            fences.claim(session, namespace, part);
            Set<BsonValue> present = Promotion.idsIn(fast, session, namespace, part);
            Map<BsonValue, Fence> fencesNow = fences.read(session, namespace, part);
            if (!present.isEmpty()) {
                // copied in since the fast tier was queried above, or held there with a version that does not match
                for (BsonValue id : idsIn(fast, session, namespace, restricted(statement.filter(), new ArrayList<>(present)),
                        statement.collation(), 0)) {
                    if (userDeletes.deleteInSession(session, namespace, id) == 0) {
                        return null; // gone since read, as above
                    }
                    fastTier++;
                    if (statement.single()) {
                        return new Deleted(fastTier, archiveOnly);
                    }
                }
            }
            for (BsonValue id : part) {
                if (present.contains(id)) {
                    continue;
                }
                Fence then = r.fencesAtRead().get(id);
                Fence now = fencesNow.get(id);
                if (now != null && now.kind() == Fence.Kind.USER_DELETE) {
                    continue; // deleted already (the archive copy is on its way out)
                }
                if (now != null && (then == null || !then.deleteId().equals(now.deleteId()))) {
                    return null; // evicted since the archive was read: that read may be older than the evicted version
                }
                fences.write(session, namespace, id, Fence.Kind.USER_DELETE);
                archiveOnly++;
                if (statement.single()) {
                    return new Deleted(fastTier, archiveOnly);
                }
            }
        }
        return new Deleted(fastTier, archiveOnly);
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
            BsonValue id = first(archive, write.namespace(), query, sort, collation(command));
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

    /**
     * findAndModify with {@code remove}: the target is picked as routed, then removed in one transaction
     * that claims its fence first (as {@link #deleteInSession}): from the fast tier when it holds the
     * document, else by its tombstone alone, answering with the archive's version (its latest).
     */
    private RawBsonDocument removeOne(Exchange x, String namespace, WriteRoute route, BsonDocument query, BsonDocument sort,
                                      BsonDocument command, TieredRouting routing) throws InterruptedException {
        Collation collation = collation(command);
        BsonDocument fields = command.isDocument("fields") ? command.getDocument("fields") : null;
        for (int attempt = 1; attempt <= MAX_RESOLVE_ATTEMPTS; attempt++) {
            BsonValue id;
            if (route instanceof WriteRoute.FastTier) {
                id = first(fast, namespace, query, sort, collation);
            } else if (route instanceof WriteRoute.ResolveOneThenPointWrite) {
                sync();
                id = first(archive, namespace, query, sort, collation);
            } else {
                id = first(fast, namespace, query, sort, collation);
                if (id == null) {
                    id = first(archive, namespace, query, sort, collation);
                }
            }
            if (id == null) {
                return OpMsg.raw(removeReply(null));
            }
            BsonValue target = id;
            BsonDocument pinned = restricted(query, List.of(target));
            Fence then = fences.read(null, namespace, List.of(target)).get(target);
            // read after the fence: an eviction after this read shows as a changed fence below
            BsonDocument archived = Blocking.single(Promotion.collection(archive, namespace).find(pinned).collation(collation)
                    .projection(fields).first()).orElse(null);
            Optional<BsonDocument> reply = inTransactionUnless(x, x, routing, session -> {
                fences.claim(session, namespace, List.of(target));
                BsonDocument removed = Blocking.single(Promotion.collection(fast, namespace).findOneAndDelete(session, pinned,
                        new FindOneAndDeleteOptions().projection(fields).collation(collation))).orElse(null);
                if (removed != null) {
                    fences.write(session, namespace, target, Fence.Kind.USER_DELETE);
                    return new Outcome(removeReply(removed), true);
                }
                if (!Promotion.idsIn(fast, session, namespace, List.of(target)).isEmpty() || archived == null) {
                    return new Outcome(removeReply(null), true); // the fast tier's version does not match
                }
                Fence now = fences.read(session, namespace, List.of(target)).get(target);
                if (now != null && now.kind() == Fence.Kind.USER_DELETE) {
                    return new Outcome(removeReply(null), true);
                }
                if (now != null && (then == null || !then.deleteId().equals(now.deleteId()))) {
                    return null;
                }
                fences.write(session, namespace, target, Fence.Kind.USER_DELETE);
                return new Outcome(removeReply(archived), true);
            });
            if (reply.isPresent()) {
                return OpMsg.raw(reply.get());
            }
        }
        throw documentsKeptMoving(namespace);
    }

    private static BsonDocument removeReply(BsonDocument value) {
        return new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(value == null ? 0 : 1)))
                .append("value", value == null ? BsonNull.VALUE : value)
                .append("ok", new BsonDouble(1));
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
        String field = command.isArray("documents") ? "documents" : command.isArray("updates") ? "updates" : null;
        if (field == null) {
            return OpMsg.raw(guardedOnce(x, namespace, command, ids, routing, answer -> answer));
        }
        return OpMsg.raw(statementsThatSucceed(x, namespace, command, field, ids, routing));
    }

    /**
     * A write error aborts the guarded transaction, so nothing of it stands, while one database would
     * have applied the statements before the error (ordered) or all the others (unordered). So the
     * statements that failed are taken out and the rest runs again, until a run has no write error;
     * the client gets that run's reply with the failed statements' errors at their own indexes.
     */
    private BsonDocument statementsThatSucceed(Exchange x, String namespace, BsonDocument command, String field,
                                               List<BsonValue> ids, TieredRouting routing) throws InterruptedException {
        BsonArray statements = command.getArray(field);
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        List<Integer> live = new ArrayList<>();
        for (int i = 0; i < statements.size(); i++) {
            live.add(i);
        }
        List<BsonDocument> errors = new ArrayList<>();
        for (int round = 0; round <= statements.size(); round++) {
            if (live.isEmpty()) {
                BsonDocument none = new BsonDocument("n", new BsonInt32(0));
                if (field.equals("updates")) {
                    none.append("nModified", new BsonInt32(0));
                }
                return withErrors(none.append("ok", new BsonDouble(1)), errors, live); // nothing ran: nothing to record
            }
            BsonArray subset = new BsonArray();
            live.forEach(i -> subset.add(statements.get(i)));
            BsonDocument attempt = Replies.mutable(command);
            attempt.put(field, subset);
            List<BsonDocument> failedBefore = List.copyOf(errors);
            List<Integer> running = List.copyOf(live);
            // the reply is completed inside the committing transaction, so the retryable record holds it whole
            boolean[] committed = new boolean[1];
            BsonDocument answer = guardedOnce(x, namespace, attempt, ids, routing, reply -> {
                committed[0] = true;
                return failedBefore.isEmpty() ? reply : withErrors(reply, failedBefore, running);
            });
            if (committed[0] || !Replies.isOk(answer) || !answer.isArray("writeErrors") || answer.getArray("writeErrors").isEmpty()) {
                return answer;
            }
            List<Integer> failed = new ArrayList<>();
            for (BsonValue error : answer.getArray("writeErrors")) {
                failed.add(error.asDocument().getNumber("index").intValue());
            }
            java.util.Collections.sort(failed);
            if (ordered) {
                // the first error ends an ordered write: only the statements before it ran
                int first = failed.get(0);
                errors.clear();
                errors.add(renumbered(errorAt(answer, first), live.get(first)));
                live = new ArrayList<>(live.subList(0, first));
            } else {
                for (int i = failed.size() - 1; i >= 0; i--) {
                    int index = failed.get(i);
                    errors.add(renumbered(errorAt(answer, index), live.get(index)));
                    live.remove(index);
                }
            }
        }
        throw new TierLagging("the statements of this write on " + namespace + " kept failing differently; retry");
    }

    private static BsonDocument errorAt(BsonDocument reply, int index) {
        for (BsonValue error : reply.getArray("writeErrors")) {
            if (error.asDocument().getNumber("index").intValue() == index) {
                return error.asDocument();
            }
        }
        throw new IllegalStateException("no write error at " + index);
    }

    private static BsonDocument renumbered(BsonDocument indexed, int index) {
        BsonDocument copy = Replies.mutable(indexed);
        copy.put("index", new BsonInt32(index));
        return copy;
    }

    /** The reply of the statements that ran ({@code live}: their indexes in the client's command), with the others' errors. */
    private static BsonDocument withErrors(BsonDocument reply, List<BsonDocument> errors, List<Integer> live) {
        BsonDocument out = Replies.mutable(reply);
        if (out.isArray("upserted")) {
            BsonArray upserted = new BsonArray();
            for (BsonValue u : out.getArray("upserted")) {
                upserted.add(renumbered(u.asDocument(), live.get(u.asDocument().getNumber("index").intValue())));
            }
            out.put("upserted", upserted);
        }
        List<BsonDocument> sorted = new ArrayList<>(errors);
        sorted.sort(java.util.Comparator.comparingInt(e -> e.getNumber("index").intValue()));
        if (!sorted.isEmpty()) {
            out.put("writeErrors", new BsonArray(sorted));
        }
        return out;
    }

    private BsonDocument guardedOnce(Exchange x, String namespace, BsonDocument command, List<BsonValue> ids,
                                     TieredRouting routing, java.util.function.UnaryOperator<BsonDocument> finish)
            throws InterruptedException {
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
            Optional<BsonDocument> reply = inTransactionUnless(x, x, routing, session -> {
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
                return failed ? new Outcome(answer, false) : new Outcome(finish.apply(answer), true);
            });
            if (reply.isPresent()) {
                return reply.get();
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
        fences.claim(session, namespace, vanished); // a user delete of one of them then conflicts with the copy back
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
        return insertedAll(session, namespace, copies);
    }

    /**
     * Inserts copies inside the guarded transaction; false when another transaction inserted one of them
     * since it was checked (another replica's guarded copy of the same document, a user insert): the attempt
     * starts over and then finds it. MongoDB reports that as a WriteConflict (transient, retried anyway),
     * a read-committed server as a duplicate key.
     */
    private boolean insertedAll(ClientSession session, String namespace, List<BsonDocument> copies) {
        try {
            Blocking.run(Promotion.collection(fast, namespace).insertMany(session, copies));
            return true;
        } catch (com.mongodb.MongoBulkWriteException e) {
            if (e.getWriteErrors().stream().allMatch(w -> com.mongodb.ErrorCategory.fromErrorCode(w.getCode())
                    == com.mongodb.ErrorCategory.DUPLICATE_KEY)) {
                return false;
            }
            throw e;
        }
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
        Set<BsonValue> present = Promotion.idsIn(fast, session, namespace, candidates);
        List<BsonValue> absent = new ArrayList<>();
        for (BsonValue id : candidates) {
            if (!present.contains(id)) {
                absent.add(id);
            }
        }
        // claim before reading: a delete committed before the claim is seen below, a later one conflicts
        fences.claim(session, namespace, absent);
        Map<BsonValue, Fence> fencesNow = fences.read(session, namespace, candidates);
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
            if (!insertedAll(session, namespace, copies)) {
                return null;
            }
        }
        List<BsonValue> ids = new ArrayList<>();
        copies.forEach(d -> ids.add(d.get("_id")));
        return ids;
    }

    /** What one attempt of a proxy transaction decided: commit (the write stands) or abort (nothing applied); the client's reply either way. */
    private record Outcome(BsonDocument reply, boolean commit) {
    }

    /** A retryable write another execution already committed: its recorded reply, in place of running again. */
    private static final class Replayed extends RuntimeException {
        final RawBsonDocument reply;

        Replayed(RawBsonDocument reply) {
            super(null, null, false, false);
            this.reply = reply;
        }
    }

    /**
     * Runs {@code body} in a fast-tier transaction: a user transaction (not marked as Thermocline's own),
     * so the feeder mirrors it. Empty (aborted) when {@code body} returns null, so the caller starts over.
     * With {@code recordFor}, a retryable write: its recorded reply found inside the transaction ends the
     * command ({@link Replayed}), and a committing outcome's reply is recorded in the same transaction.
     */
    private Optional<BsonDocument> inTransactionUnless(Exchange x, Exchange recordFor, TieredRouting routing, InSession<Outcome> body) {
        for (int attempt = 1; ; attempt++) {
            ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
            try {
                session.startTransaction(TransactionOptions.builder()
                        .readConcern(com.mongodb.ReadConcern.LOCAL).writeConcern(WriteConcern.MAJORITY).build());
                Optional<RawBsonDocument> recorded = recordFor == null ? Optional.empty() : replies.replay(session, recordFor);
                if (recorded.isPresent()) {
                    abortQuietly(session);
                    throw new Replayed(recorded.get());
                }
                Outcome outcome = body.apply(session);
                if (outcome == null || !outcome.commit()) {
                    abortQuietly(session);
                    return outcome == null ? Optional.empty() : Optional.of(outcome.reply());
                }
                if (recordFor != null && !replies.record(session, recordFor, outcome.reply())) {
                    abortQuietly(session); // another execution of this write committed first: replay it
                    backOff(attempt);
                    continue;
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

    private void count(WriteRoute route) {
        Served served = route instanceof WriteRoute.FastTier || route instanceof WriteRoute.PointWrite ? Served.FAST
                : route instanceof WriteRoute.Archive ? Served.ARCHIVE : Served.BOTH;
        metrics.decided("write", served, route.reason());
    }

    /** The sync barrier before a drop: every fast-tier write acknowledged before now is in the archive (or throws retryably). */
    void mirrorEverythingWritten() throws InterruptedException {
        sync();
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

    private static BsonDocument restricted(BsonDocument filter, List<BsonValue> ids) {
        return new BsonDocument("$and", new BsonArray(List.of(filter, new BsonDocument("_id", new BsonDocument("$in", new BsonArray(ids))))));
    }

    private static BsonDocument documentOrEmpty(BsonDocument statement, String field) {
        return statement.isDocument(field) ? statement.getDocument(field) : new BsonDocument();
    }

    /**
     * The statement's collation, for every query the proxy runs to resolve its targets: under a
     * case-insensitive collation {@code {sku: "a"}} also matches {@code "A"}, as the write itself will.
     */
    static Collation collation(BsonDocument statement) {
        if (!statement.isDocument("collation")) {
            return null;
        }
        BsonDocument c = statement.getDocument("collation");
        Collation.Builder b = Collation.builder();
        if (c.isString("locale")) {
            b.locale(c.getString("locale").getValue());
        }
        if (c.isBoolean("caseLevel")) {
            b.caseLevel(c.getBoolean("caseLevel").getValue());
        }
        if (c.isString("caseFirst")) {
            b.collationCaseFirst(com.mongodb.client.model.CollationCaseFirst.fromString(c.getString("caseFirst").getValue()));
        }
        if (c.isNumber("strength")) {
            b.collationStrength(com.mongodb.client.model.CollationStrength.fromInt(c.getNumber("strength").intValue()));
        }
        if (c.isBoolean("numericOrdering")) {
            b.numericOrdering(c.getBoolean("numericOrdering").getValue());
        }
        if (c.isString("alternate")) {
            b.collationAlternate(com.mongodb.client.model.CollationAlternate.fromString(c.getString("alternate").getValue()));
        }
        if (c.isString("maxVariable")) {
            b.collationMaxVariable(com.mongodb.client.model.CollationMaxVariable.fromString(c.getString("maxVariable").getValue()));
        }
        if (c.isBoolean("normalization")) {
            b.normalization(c.getBoolean("normalization").getValue());
        }
        if (c.isBoolean("backwards")) {
            b.backwards(c.getBoolean("backwards").getValue());
        }
        return b.build();
    }

    private static BsonValue first(MongoClient client, String namespace, BsonDocument filter, BsonDocument sort, Collation collation) {
        return Blocking.single(Promotion.collection(client, namespace).find(filter).sort(sort).collation(collation).limit(1)
                .projection(Projections.include("_id")).first()).map(d -> d.get("_id")).orElse(null);
    }

    private static List<BsonValue> idsIn(MongoClient client, String namespace, BsonDocument filter, Collation collation, int limit) {
        return idsOf(Promotion.collection(client, namespace).find(filter).collation(collation).limit(limit));
    }

    /** The same, read inside a transaction of {@code session}. */
    private static List<BsonValue> idsIn(MongoClient client, ClientSession session, String namespace, BsonDocument filter,
                                         Collation collation, int limit) {
        return idsOf(Promotion.collection(client, namespace).find(session, filter).collation(collation).limit(limit));
    }

    private static List<BsonValue> idsOf(com.mongodb.reactivestreams.client.FindPublisher<BsonDocument> find) {
        List<BsonValue> ids = new ArrayList<>();
        for (BsonDocument d : Blocking.list(find.projection(Projections.include("_id")))) {
            ids.add(d.get("_id"));
        }
        return ids;
    }
}
