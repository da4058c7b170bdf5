package io.thermocline.proxy.tiered.writes;

import static io.thermocline.proxy.tiered.writes.Statements.collation;
import static io.thermocline.proxy.tiered.writes.Statements.documentOrEmpty;
import static io.thermocline.proxy.tiered.writes.Statements.restricted;

import com.mongodb.client.model.Collation;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.routing.AgeProof;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.writes.GuardedTransaction.Outcome;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.UserDeletes;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.wire.OpMsg;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Deletes run in fast-tier transactions that decide their targets themselves (so a copy-up that
 * commits while the delete resolves cannot hide a document from it), and {@code n} counts what they
 * deleted. Every deleted document gets a {@code USER_DELETE} fence ({@link UserDeletes}), so the feeder
 * deletes the archive copy even when the fast tier no longer held it. A document only the archive holds is
 * copied in first ({@link GuardedCopies#copyToDelete}) and deleted in the fast tier in the same transaction:
 * the fast tier's change stream then shows the delete where one database would, with its own resume token
 * (a tombstone alone writes nothing in the user's collection). Single-document statements (the
 * retryable kind) run in one transaction with the reply record; a multi-document statement runs in
 * chunks of {@value Updates#CHUNK} documents per transaction (one database does not delete them
 * atomically either, and drivers do not retry it).
 */
final class Deletes {

    private static final int RESOLVE_CANDIDATES = 100;

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final Fences fences;
    private final UserDeletes userDeletes;
    private final GuardedTransaction transactions;
    private final GuardedCopies copies;
    private final SyncBarrier sync;
    private final RouteCounter routes;
    private final WriteRaces races;

    Deletes(
            MongoClient fast,
            ArchiveReads archive,
            Fences fences,
            UserDeletes userDeletes,
            GuardedTransaction transactions,
            GuardedCopies copies,
            SyncBarrier sync,
            RouteCounter routes,
            WriteRaces races) {
        this.fast = fast;
        this.archive = archive;
        this.fences = fences;
        this.userDeletes = userDeletes;
        this.transactions = transactions;
        this.copies = copies;
        this.sync = sync;
        this.routes = routes;
        this.races = races;
    }

    /** One statement of a delete command, as routed. */
    private record DeleteStatement(BsonDocument filter, Collation collation, boolean single, boolean archiveToo) {}

    /**
     * The archive's candidates for a statement: documents matching there, read again after their
     * fences were read (so an eviction after that read shows in the transaction as a changed fence);
     * {@code versions}: those documents as that second read found them, keyed in MongoDB's order.
     */
    private record Resolved(
            List<BsonValue> candidates, Map<BsonValue, BsonDocument> versions, Map<BsonValue, Fence> fencesAtRead) {
        static final Resolved NONE = new Resolved(List.of(), Map.of(), Map.of());
    }

    /** What one delete transaction removed: documents the fast tier held, and documents only the archive held. */
    private record Deleted(long fastTier, long archiveOnly) {
        long n() {
            return fastTier + archiveOnly;
        }
    }

    RawBsonDocument delete(WriteRequest x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound)
            throws InterruptedException {
        List<DeleteStatement> statements = new ArrayList<>();
        for (BsonDocument statement : write.statements()) {
            WriteRoute route = WriteRouter.delete(statement, policy, bound);
            routes.count(route);
            boolean single =
                    statement.isNumber("limit") && statement.getNumber("limit").intValue() == 1;
            statements.add(new DeleteStatement(
                    documentOrEmpty(statement, "q"),
                    collation(statement),
                    single,
                    !(route instanceof WriteRoute.FastTier)));
        }
        String namespace = write.namespace();
        if (statements.stream().allMatch(DeleteStatement::single)) {
            // one transaction: a refusal at an archive read aborts it whole; a document the fast tier holds is deleted
            // without reading the archive, so served while the archive is out of service
            if (statements.stream().anyMatch(s -> s.archiveToo() && !matchesByIdAlone(s.filter()))) {
                // the archive may hold an older version of a document evicted with writes not yet mirrored (an
                // update and its undo racing the eviction); whether such a version matches depends on its fields,
                // so the archive must first reflect every write acknowledged before this delete, as for updates
                sync.await();
            }
            return OpMsg.raw(transactions.run(x, true, keptMoving(namespace), () -> session -> {
                long n = 0;
                for (DeleteStatement statement : statements) {
                    // the archive is read after the transaction's fast-tier read: a document evicted before that
                    // read is in the archive then, one evicted after it conflicts with this transaction
                    Deleted d = deleteInSession(
                            session, namespace, statement, () -> resolve(namespace, statement, null), 1);
                    if (d == null) {
                        return null;
                    }
                    n += d.n();
                }
                return Outcome.committed(reply(n));
            }));
        }
        if (statements.stream().anyMatch(DeleteStatement::archiveToo)) {
            // a transaction per statement: refused before the first runs, not left half done by a refusal
            archive.refuseWhileOutOfService("delete");
        }
        long n = 0;
        BsonDocument[] unmet = new BsonDocument[1]; // a transaction's unmet write concern, reported once as mongod does
        for (DeleteStatement statement : statements) {
            n += deleteMany(x, namespace, statement, unmet);
        }
        return OpMsg.raw(ClientWriteConcern.withError(reply(n), unmet[0]));
    }

    /** Whether a filter selects by {@code _id} equality only: then any version of the document matches it alike. */
    private static boolean matchesByIdAlone(BsonDocument filter) {
        return filter.size() == 1
                && filter.containsKey("_id")
                && AgeProof.idEquality(filter).isPresent();
    }

    static String keptMoving(String namespace) {
        return "documents of " + namespace + " kept changing tier while this write ran; retry";
    }

    private static BsonDocument reply(long n) {
        return new BsonDocument("n", new BsonInt32((int) n)).append("ok", new BsonDouble(1));
    }

    /**
     * A multi-document statement (not retryable): the archive's candidates chunk by chunk, each
     * transaction with up to a chunk of fast-tier matches, until the fast tier has no more.
     */
    private long deleteMany(WriteRequest x, String namespace, DeleteStatement statement, BsonDocument[] unmet)
            throws InterruptedException {
        if (statement.archiveToo()) {
            // the archive then holds every document written before the delete, so none slips out of the fast
            // tier (mirrored, then evicted) between this listing and the transaction that reads the fast tier
            sync.await();
        }
        List<BsonValue> all = statement.archiveToo()
                ? TierQueries.idsMatching(
                        archive.client("delete"), null, namespace, statement.filter(), statement.collation(), 0)
                : List.of();
        long n = 0;
        int from = 0;
        while (true) {
            List<BsonValue> chunk = new ArrayList<>(all.subList(from, Math.min(all.size(), from + Updates.CHUNK)));
            from += chunk.size();
            Deleted[] done = new Deleted[1];
            BsonDocument ran = transactions.run(x, false, keptMoving(namespace), () -> {
                Resolved r = resolve(namespace, statement, chunk);
                return session -> {
                    done[0] = deleteInSession(session, namespace, statement, () -> r, Updates.CHUNK);
                    return done[0] == null ? null : Outcome.committed(reply(done[0].n()));
                };
            });
            unmet[0] = ClientWriteConcern.errorOf(ran, unmet[0]);
            n += done[0].n();
            if (from >= all.size() && done[0].fastTier() < Updates.CHUNK) {
                return n;
            }
        }
    }

    /** The archive's candidates ({@code within}: only among these ids), with their fences read before the second archive read. */
    private Resolved resolve(String namespace, DeleteStatement statement, List<BsonValue> within) {
        if (!statement.archiveToo()) {
            return Resolved.NONE;
        }
        List<BsonValue> first = within != null
                ? within
                : TierQueries.idsMatching(
                        archive.client("delete"),
                        null,
                        namespace,
                        statement.filter(),
                        statement.collation(),
                        statement.single() ? RESOLVE_CANDIDATES : 0);
        if (first.isEmpty()) {
            return Resolved.NONE;
        }
        Map<BsonValue, Fence> fenced = fences.read(null, namespace, Fences.withDropFence(first));
        List<BsonValue> confirmed = new ArrayList<>();
        Map<BsonValue, BsonDocument> versions = new TreeMap<>(BsonOrder.COMPARATOR);
        for (BsonDocument d : Blocking.list(TierQueries.collection(archive.client("delete"), namespace)
                .find(restricted(statement.filter(), first))
                .collation(statement.collation()))) {
            confirmed.add(d.get("_id"));
            versions.put(d.get("_id"), d);
        }
        return new Resolved(confirmed, versions, fenced);
    }

    /**
     * One statement's deletes inside the transaction; null when the attempt must start over. The fast
     * tier's matches (its versions are the latest) are deleted with a tombstone each. Then the archive's
     * other candidates: their fences are claimed first, so a copy-up of one of them that has not
     * committed conflicts with this transaction and one that committed is seen; a candidate the fast tier
     * now holds is deleted there if its version matches; one it does not hold is decided by
     * {@link ColdTarget}. A single delete claims one candidate at a time.
     */
    private Deleted deleteInSession(
            ClientSession session,
            String namespace,
            DeleteStatement statement,
            Supplier<Resolved> archiveCandidates,
            int fastLimit) {
        long fastTier = 0;
        List<BsonValue> fastMatches =
                TierQueries.idsMatching(fast, session, namespace, statement.filter(), statement.collation(), fastLimit);
        races.reached(WriteRaces.Point.DELETE_BETWEEN_TIER_READS);
        for (BsonValue id : fastMatches) {
            if (userDeletes.deleteInSession(session, namespace, id) == 0) {
                return null; // gone since read (the evictor): its tombstone would delete the archive copy uncounted
            }
            fastTier++;
            if (statement.single()) {
                return new Deleted(fastTier, 0);
            }
        }
        Resolved r = archiveCandidates.get();
        List<BsonValue> cold = new ArrayList<>(r.candidates());
        cold.removeAll(fastMatches);
        int step = statement.single() ? 1 : Math.max(1, cold.size());
        long archiveOnly = 0;
        for (int from = 0; from < cold.size(); from += step) {
            List<BsonValue> part = cold.subList(from, Math.min(cold.size(), from + step));
            fences.claim(session, namespace, part);
            Set<BsonValue> present = TierQueries.idsIn(fast, session, namespace, part);
            Map<BsonValue, Fence> fencesNow = fences.read(session, namespace, Fences.withDropFence(part));
            if (!present.isEmpty()) {
                // copied in since the fast tier was queried above, or held there with a version that does not match
                for (BsonValue id : TierQueries.idsMatching(
                        fast,
                        session,
                        namespace,
                        restricted(statement.filter(), new ArrayList<>(present)),
                        statement.collation(),
                        0)) {
                    if (userDeletes.deleteInSession(session, namespace, id) == 0) {
                        return null; // gone since read, as above
                    }
                    fastTier++;
                    if (statement.single()) {
                        return new Deleted(fastTier, archiveOnly);
                    }
                }
            }
            List<BsonValue> archived = new ArrayList<>();
            for (BsonValue id : part) {
                if (present.contains(id)) {
                    continue;
                }
                switch (ColdTarget.of(r.fencesAtRead().get(id), fencesNow.get(id))) {
                    case START_OVER -> {
                        return null;
                    }
                    case ALREADY_DELETED -> {}
                    case TOMBSTONE -> archived.add(id);
                }
                if (statement.single() && !archived.isEmpty()) {
                    break;
                }
            }
            if (ColdTarget.dropMoved(r.fencesAtRead().get(Fence.namespaceId()), fencesNow.get(Fence.namespaceId()))) {
                // the collection is being (or was) dropped: a copy would recreate it in the fast tier; its drop event
                // ends
                // the application's stream anyway, so the tombstones alone delete the archive's copies
                for (BsonValue id : archived) {
                    fences.write(session, namespace, id, Fence.Kind.USER_DELETE);
                    archiveOnly++;
                }
            } else {
                List<BsonDocument> versions =
                        archived.stream().map(id -> r.versions().get(id)).toList();
                if (!copies.copyToDelete(session, namespace, versions)) {
                    return null;
                }
                for (BsonValue id : archived) {
                    if (userDeletes.deleteInSession(session, namespace, id) == 0) {
                        return null; // the copy is gone: cannot happen inside this transaction, but never count what
                        // was not deleted
                    }
                    archiveOnly++;
                }
            }
            if (statement.single() && archiveOnly > 0) {
                return new Deleted(fastTier, archiveOnly);
            }
        }
        return new Deleted(fastTier, archiveOnly);
    }
}
