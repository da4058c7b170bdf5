package io.thermocline.proxy.tiered.writes;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.writes.GuardedTransaction.Outcome;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.wire.OpMsg;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * A write on documents that may be cold: the client's command runs in a fast-tier transaction that
 * first copies the archived versions of the documents the fast tier lacks, under the workers' copy-up
 * rule ({@link GuardedCopies}: fences read before the sync barrier and the archive read, compared inside
 * the transaction; never over a fast-tier version), and checks that the documents the fast tier held are
 * still there. Copy and write are one transaction, so the evictor cannot remove a promoted document in
 * between (a separate promotion would race it and the write would miss the document); the copies are
 * mirrored with the write as the archive's own versions, which is harmless. The server's own reply,
 * counts included, is what the client gets.
 */
final class GuardedWrite {

    /** Fields of a client command that belong to the client's session, not to the proxy's transaction. */
    private static final Set<String> SESSION_FIELDS = Set.of(
            "lsid",
            "txnNumber",
            "autocommit",
            "startTransaction",
            "$db",
            "$clusterTime",
            "$readPreference",
            "readConcern",
            "writeConcern",
            "apiVersion",
            "apiStrict",
            "apiDeprecationErrors");

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final Fences fences;
    private final GuardedCopies copies;
    private final GuardedTransaction transactions;
    private final SyncBarrier sync;
    private final MongoCollection<BsonDocument> probes;
    private final String lockPrefix;
    private final WriteRaces races;
    private final UniqueIndexes uniques;

    GuardedWrite(
            MongoClient fast,
            ArchiveReads archive,
            Fences fences,
            GuardedCopies copies,
            GuardedTransaction transactions,
            SyncBarrier sync,
            MongoCollection<BsonDocument> probes,
            String lockPrefix,
            WriteRaces races,
            UniqueIndexes uniques) {
        this.fast = fast;
        this.archive = archive;
        this.fences = fences;
        this.copies = copies;
        this.transactions = transactions;
        this.sync = sync;
        this.probes = probes;
        this.lockPrefix = lockPrefix;
        this.races = races;
        this.uniques = uniques;
    }

    /** Runs {@code command} (the client's, possibly rewritten) guarded over the documents {@code ids}. */
    RawBsonDocument run(WriteRequest x, String namespace, BsonDocument command, List<BsonValue> ids)
            throws InterruptedException {
        return run(x, namespace, command, ids, UnaryOperator.identity());
    }

    /**
     * As {@link #run(WriteRequest, String, BsonDocument, List)}, the client's reply made by {@code complete} from the
     * command's (inside the committing transaction, so a retry replays it whole): the rest of a retryable write
     * whose other statements the fast tier ran ({@link ExactlyOnce}).
     */
    RawBsonDocument run(
            WriteRequest x,
            String namespace,
            BsonDocument command,
            List<BsonValue> ids,
            UnaryOperator<BsonDocument> complete)
            throws InterruptedException {
        String field = command.isArray("documents") ? "documents" : command.isArray("updates") ? "updates" : null;
        if (field == null) {
            return OpMsg.raw(once(x, namespace, command, ids, complete));
        }
        BsonDocument reply = StatementsThatSucceed.run(
                namespace, command, field, complete, (attempt, finish) -> once(x, namespace, attempt, ids, finish));
        return OpMsg.raw(transactions.writeConcernWaited(x, reply));
    }

    /** One guarded run of {@code command}; a committing reply passes through {@code finish} inside the transaction. */
    private BsonDocument once(
            WriteRequest x,
            String namespace,
            BsonDocument command,
            List<BsonValue> ids,
            UnaryOperator<BsonDocument> finish)
            throws InterruptedException {
        BsonDocument cmd = new BsonDocument();
        command.forEach((k, v) -> {
            if (!SESSION_FIELDS.contains(k)) {
                cmd.append(k, v);
            }
        });
        String database = new MongoNamespace(namespace).getDatabaseName();
        List<BsonValue> distinct = new ArrayList<>(new LinkedHashSet<>(ids));
        boolean[] heldFirst = {HeldPointUpdate.applies(cmd, distinct)};
        Set<BsonValue> keyHolders = new HashSet<>(); // documents found in the archive holding a key this write gives
        return transactions.run(
                x,
                true,
                "documents of " + namespace + " kept changing tier while this write promoted them; retry",
                () -> {
                    if (heldFirst[0]) {
                        heldFirst[0] = false; // one try: any later attempt takes the checked path below
                        return session ->
                                heldPointUpdate(session, namespace, database, cmd, finish, distinct, keyHolders);
                    }
                    long started = System.nanoTime();
                    Map<BsonValue, Fence> fencesAtRead = fences.read(null, namespace, Fences.withDropFence(distinct));
                    races.reached(WriteRaces.Point.GUARDED_WRITE_FENCES_READ);
                    Set<BsonValue> held = TierQueries.idsIn(fast, null, namespace, distinct);
                    List<BsonValue> missing = new ArrayList<>(distinct);
                    missing.removeAll(held);
                    Map<BsonValue, BsonDocument> archived = new HashMap<>();
                    if (!missing.isEmpty()
                            && !TierQueries.idsIn(archive.client(x.traits().name()), null, namespace, missing)
                                    .isEmpty()) {
                        if (!fencesAtRead.isEmpty()) {
                            // the archive now reflects every fast-tier delete older than the fences read above
                            sync.await();
                        }
                        // else none of them and not the namespace is fenced: documents absent from the fast tier
                        // and unfenced have their latest versions in the archive already, as for point reads
                        // (docs/consistency.md, "Point reads that skip the barrier"); a fence written since the
                        // read above starts the attempt over
                        for (BsonDocument d :
                                TierQueries.documents(archive.client(x.traits().name()), namespace, missing)) {
                            archived.put(d.get("_id"), d);
                        }
                    }
                    races.reached(WriteRaces.Point.GUARDED_WRITE_TIERS_READ);
                    return session -> {
                        takeWriteLock(session);
                        List<BsonValue> copied =
                                copies.copyMissing(session, namespace, archived, fencesAtRead, started);
                        if (copied == null || !copies.restoreEvicted(session, namespace, held)) {
                            return null;
                        }
                        List<BsonValue> mustExist = new ArrayList<>(held);
                        mustExist.addAll(copied);
                        BsonDocument answer = clientCommand(session, database, cmd);
                        if (!Replies.isOk(answer)) {
                            return Outcome.aborted(answer);
                        }
                        boolean failed = answer.containsKey("writeErrors") || answer.containsKey("writeConcernError");
                        if (!failed && !copies.allPresent(session, namespace, mustExist)) {
                            // removed between the check and the write (a server without snapshot reads in transactions)
                            return null;
                        }
                        if (failed) {
                            return Outcome.aborted(answer);
                        }
                        if (heldUniqueKey(session, namespace, cmd, answer, distinct, keyHolders)) {
                            return null;
                        }
                        return Outcome.committed(finish.apply(answer));
                    };
                });
    }

    /**
     * The update runs first, unchecked, in the guarded transaction: its reply proves the fast tier held
     * the document ({@link HeldPointUpdate#proved}), and once the update has written it no eviction or
     * delete can commit before this transaction ends (they conflict with it). Anything else (the document
     * was not there, an upsert created it, a write error) aborts it and the attempt starts over checked.
     */
    private Outcome heldPointUpdate(
            ClientSession session,
            String namespace,
            String database,
            BsonDocument cmd,
            UnaryOperator<BsonDocument> finish,
            List<BsonValue> targets,
            Set<BsonValue> keyHolders) {
        races.reached(WriteRaces.Point.HELD_UPDATE_IN_TRANSACTION);
        BsonDocument answer = clientCommand(session, database, cmd);
        if (!HeldPointUpdate.proved(answer) || heldUniqueKey(session, namespace, cmd, answer, targets, keyHolders)) {
            return null;
        }
        return Outcome.committed(finish.apply(answer));
    }

    /**
     * Whether a document only the archive holds has a unique key the update (or findAndModify) just gave a
     * written document ({@link UniqueIndexes#archiveOnlyHolders}): then it joins {@code targets}, and the
     * attempt starts over, copying it in first, so the fast tier's unique index refuses the write with its
     * own E11000. Read after the write, inside its transaction: a holder evicted before the transaction's
     * snapshot is in the archive by then; one the fast tier held at it met the fast tier's index, or, removed
     * since, still shows in the snapshot with the key and counts; a concurrent writer of the same key
     * conflicts with this transaction in the fast tier's index. Inserted documents without an {@code _id}
     * (the server assigns it) are checked only before the write ({@code Inserts}).
     */
    private boolean heldUniqueKey(
            ClientSession session,
            String namespace,
            BsonDocument cmd,
            BsonDocument answer,
            List<BsonValue> targets,
            Set<BsonValue> keyHolders) {
        List<BsonValue> holders =
                uniques.archiveOnlyHolders(session, namespace, written(cmd, answer, targets, keyHolders));
        if (holders.isEmpty()) {
            return false;
        }
        // found again after a start that had it among its targets: it moved between tiers meanwhile (the evictor
        // removed a copy after this transaction's snapshot); the next start copies it again (bounded by MAX_STARTS)
        holders.forEach(id -> {
            if (keyHolders.add(id)) {
                targets.add(id);
            }
        });
        return true;
    }

    /**
     * The documents a write wrote: what it inserted; or an update's targets (not the key holders among them,
     * which it does not write: they must stay visible to the check, whatever the fast tier's index saw) and
     * what it upserted.
     */
    static List<BsonValue> written(
            BsonDocument cmd, BsonDocument answer, List<BsonValue> targets, Set<BsonValue> keyHolders) {
        List<BsonValue> ids = new ArrayList<>();
        if (cmd.isArray("documents")) {
            cmd.getArray("documents").forEach(d -> {
                if (d.isDocument() && d.asDocument().containsKey("_id")) {
                    ids.add(d.asDocument().get("_id"));
                }
            });
            return ids;
        }
        targets.stream().filter(id -> !keyHolders.contains(id)).forEach(ids::add);
        if (answer.isArray("upserted")) {
            answer.getArray("upserted").forEach(u -> ids.add(u.asDocument().get("_id")));
        }
        if (answer.isDocument("value") && answer.getDocument("value").containsKey("_id")) {
            ids.add(answer.getDocument("value").get("_id"));
        }
        if (answer.isDocument("lastErrorObject")
                && answer.getDocument("lastErrorObject").containsKey("upserted")) {
            ids.add(answer.getDocument("lastErrorObject").get("upserted"));
        }
        return ids;
    }

    /**
     * The client's command inside the guarded transaction: the server's reply, or its error reply (ok 0); a
     * transient transaction error is thrown, so the transaction starts over.
     */
    private BsonDocument clientCommand(ClientSession session, String database, BsonDocument cmd) {
        try {
            return Blocking.single(fast.getDatabase(database).runCommand(session, cmd, BsonDocument.class))
                    .orElseThrow();
        } catch (MongoCommandException e) {
            if (e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                throw e;
            }
            return e.getResponse();
        }
    }

    /**
     * The first statement of a guarded transaction is a write, so the transaction holds its place before
     * it checks anything (one probe document per thread: concurrent guarded writes do not conflict on it).
     */
    private void takeWriteLock(ClientSession session) {
        Blocking.run(probes.updateOne(
                session,
                Filters.eq("_id", lockPrefix + Thread.currentThread().getId()),
                Updates.inc("seq", 1L),
                new UpdateOptions().upsert(true)));
    }
}
