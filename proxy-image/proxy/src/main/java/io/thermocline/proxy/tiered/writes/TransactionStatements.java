package io.thermocline.proxy.tiered.writes;

import com.mongodb.MongoNamespace;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.provenance.CopyMarks;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * A statement of an application's transaction pinned to the fast tier that needs more than the
 * statement itself: the copy-up of cold documents it addresses by {@code _id}, and the
 * {@code USER_DELETE} fences of what it deletes. Both join the application's transaction (commands on
 * its session, before its statement), so the transaction behaves as on one replica set: its snapshot
 * holds the copies (a copy committed outside it would be invisible to it), an abort takes them back,
 * and its deletes reach the archive through the fences whether or not the fast tier held the document.
 * A copy claims the fences first, as every copy does, so a concurrent delete or eviction conflicts with
 * the transaction; a copy the rules refuse for a reason that may clear fails the statement with a
 * {@code TransientTransactionError}, so the driver retries the whole transaction.
 */
final class TransactionStatements {

    private final ArchiveReads archive;
    private final Fences fences;
    private final SyncBarrier sync;
    private final Duration maxInFlight;

    TransactionStatements(ArchiveReads archive, Fences fences, SyncBarrier sync, Duration maxInFlight) {
        this.archive = archive;
        this.fences = fences;
        this.sync = sync;
        this.maxInFlight = maxInFlight;
    }

    /** Runs {@code statement} in the client's transaction after copying in {@code cold} and fencing its deletes. */
    RawBsonDocument run(WriteRequest x, String namespace, CommandClass statement, List<BsonValue> cold)
            throws InterruptedException {
        Joined joined = new Joined(x);
        MongoNamespace ns = new MongoNamespace(namespace);
        if (!cold.isEmpty()) {
            RawBsonDocument failed = copyIn(joined, ns, cold);
            if (failed != null) {
                return failed;
            }
        }
        for (BsonDocument find : DeleteTargets.of(statement, ns.getCollectionName())) {
            RawBsonDocument found = joined.send(find, ns.getDatabaseName());
            if (!Replies.isOk(found)) {
                return found;
            }
            for (BsonValue id : ids(found)) {
                RawBsonDocument fenced =
                        joined.send(Fences.writeCommand(namespace, id, Fence.Kind.USER_DELETE), MetadataStore.DATABASE);
                if (!succeeded(fenced)) {
                    return fenced;
                }
            }
        }
        return joined.statement();
    }

    /** Copies the archived versions of {@code ids} the transaction's snapshot lacks; the failing reply, or null. */
    private RawBsonDocument copyIn(Joined joined, MongoNamespace ns, List<BsonValue> ids) throws InterruptedException {
        String namespace = ns.getFullName();
        long started = System.nanoTime();
        Map<BsonValue, Fence> fencesAtRead = fences.read(null, namespace, Fences.withDropFence(ids));
        if (TierQueries.idsIn(archive.client(joined.name()), null, namespace, ids)
                .isEmpty()) {
            return null; // nothing cold: a document in neither tier is absent, not in flight
        }
        sync.await(); // the archive now reflects every fast-tier delete older than the fences read above
        Map<BsonValue, BsonDocument> archived = new HashMap<>();
        for (BsonDocument d : TierQueries.documents(archive.client(joined.name()), namespace, ids)) {
            archived.put(d.get("_id"), d);
        }
        List<BsonValue> candidates = new ArrayList<>(archived.keySet());
        RawBsonDocument held = joined.send(
                new BsonDocument("find", new BsonString(ns.getCollectionName()))
                        .append("filter", new BsonDocument("_id", new BsonDocument("$in", new BsonArray(candidates))))
                        .append("projection", new BsonDocument("_id", new BsonInt32(1)))
                        .append("singleBatch", BsonBoolean.TRUE)
                        .append("batchSize", new BsonInt32(candidates.size())),
                ns.getDatabaseName());
        if (!Replies.isOk(held)) {
            return held;
        }
        Set<BsonValue> present = new HashSet<>(ids(held));
        List<BsonValue> absent = new ArrayList<>(candidates);
        absent.removeAll(present);
        // claim before reading: a delete committed before the claim is seen below, a later one conflicts
        for (BsonDocument claim : Fences.claimCommands(namespace, absent)) {
            RawBsonDocument claimed = joined.send(claim, MetadataStore.DATABASE);
            if (!succeeded(claimed)) {
                return claimed;
            }
        }
        RawBsonDocument read =
                joined.send(Fences.readCommand(namespace, Fences.withDropFence(candidates)), MetadataStore.DATABASE);
        if (!Replies.isOk(read)) {
            return read;
        }
        Map<BsonValue, Fence> fencesNow = new HashMap<>();
        for (BsonValue d : firstBatch(read)) {
            if (Fence.isLeftoverClaim(d.asDocument())) {
                continue;
            }
            Fence fence = Fence.fromBson(d.asDocument());
            fencesNow.put(fence.documentId(), fence);
        }
        List<BsonValue> toCopy = GuardedCopy.toCopy(
                candidates,
                present,
                fencesAtRead,
                fencesNow,
                Instant.now(),
                Duration.ofNanos(System.nanoTime() - started),
                maxInFlight);
        if (toCopy == null) {
            return retryTransaction(
                    "a document of " + namespace + " this transaction addresses changed tier (or the collection"
                            + " was dropped) while it was copied into the fast tier");
        }
        if (toCopy.isEmpty()) {
            return null;
        }
        BsonArray copies = new BsonArray();
        toCopy.forEach(id -> copies.add(archived.get(id)));
        RawBsonDocument inserted = joined.send(
                new BsonDocument("insert", new BsonString(ns.getCollectionName())).append("documents", copies),
                ns.getDatabaseName());
        if (!succeeded(inserted)) {
            // another transaction inserted one of them since this one read (a read-committed server says E11000)
            return retryTransaction("a document of " + namespace
                    + " was copied into the fast tier by another transaction" + " while this one copied it");
        }
        // so that the application's change streams leave the copies' inserts out (CopyMarks)
        for (BsonDocument mark : CopyMarks.markCommands(namespace, toCopy)) {
            RawBsonDocument marked = joined.send(mark, MetadataStore.DATABASE);
            if (!succeeded(marked)) {
                return marked;
            }
        }
        return null;
    }

    /** The statements of a delete (or findAndModify remove) as queries for the ids they delete, in the transaction. */
    private static final class DeleteTargets {
        static List<BsonDocument> of(CommandClass statement, String collection) {
            if (!(statement instanceof CommandClass.Write write)) {
                return List.of();
            }
            List<BsonDocument> finds = new ArrayList<>();
            if (write.kind() == CommandClass.WriteKind.DELETE) {
                for (BsonDocument d : write.statements()) {
                    boolean single = d.isNumber("limit") && d.getNumber("limit").intValue() == 1;
                    finds.add(find(collection, Statements.documentOrEmpty(d, "q"), null, single, d.get("collation")));
                }
            } else if (write.kind() == CommandClass.WriteKind.FIND_AND_MODIFY
                    && Statements.flag(write.statements().get(0), "remove")) {
                BsonDocument c = write.statements().get(0);
                finds.add(find(
                        collection,
                        Statements.documentOrEmpty(c, "query"),
                        c.isDocument("sort") ? c.getDocument("sort") : null,
                        true,
                        c.get("collation")));
            }
            return finds;
        }

        private static BsonDocument find(
                String collection, BsonDocument filter, BsonDocument sort, boolean single, BsonValue collation) {
            BsonDocument find = new BsonDocument("find", new BsonString(collection))
                    .append("filter", filter)
                    .append("projection", new BsonDocument("_id", new BsonInt32(1)))
                    .append("singleBatch", BsonBoolean.TRUE);
            if (sort != null) {
                find.append("sort", sort);
            }
            if (collation != null) {
                find.append("collation", collation);
            }
            return find.append(single ? "limit" : "batchSize", new BsonInt32(single ? 1 : 100_000));
        }
    }

    /**
     * The client's transaction as the proxy joins it: its commands carry the client's lsid, txnNumber and
     * {@code autocommit: false}; the first one the proxy sends also carries {@code startTransaction} and the
     * read concern when the client's statement starts the transaction, and the statement itself then no
     * longer does.
     */
    private static final class Joined {
        private static final List<String> STARTING = List.of("startTransaction", "readConcern");
        private final WriteRequest x;
        private boolean startSent;

        Joined(WriteRequest x) {
            this.x = x;
        }

        /** The client's command's name (in a refusal). */
        String name() {
            return x.traits().name();
        }

        RawBsonDocument send(BsonDocument command, String database) {
            BsonDocument body = command.clone();
            for (String field : List.of("lsid", "txnNumber", "autocommit")) {
                body.append(field, x.command().get(field));
            }
            if (x.traits().startsTransaction() && !startSent) {
                STARTING.forEach(f -> {
                    if (x.command().containsKey(f)) {
                        body.append(f, x.command().get(f));
                    }
                });
                startSent = true;
            }
            return x.fastTier().send(body.append("$db", new BsonString(database)));
        }

        /** The client's own statement, last. */
        RawBsonDocument statement() {
            BsonDocument body = new BsonDocument();
            x.command().forEach((k, v) -> {
                if (!k.equals("$readPreference") && !(startSent && STARTING.contains(k))) {
                    body.append(k, v);
                }
            });
            return x.fastTier().send(body);
        }
    }

    private static boolean succeeded(BsonDocument reply) {
        return Replies.isOk(reply) && !reply.containsKey("writeErrors") && !reply.containsKey("writeConcernError");
    }

    private static List<BsonValue> firstBatch(BsonDocument reply) {
        return reply.isDocument("cursor") && reply.getDocument("cursor").isArray("firstBatch")
                ? reply.getDocument("cursor").getArray("firstBatch")
                : List.of();
    }

    private static List<BsonValue> ids(BsonDocument findReply) {
        List<BsonValue> ids = new ArrayList<>();
        for (BsonValue d : firstBatch(findReply)) {
            ids.add(d.asDocument().get("_id"));
        }
        return ids;
    }

    /** A WriteConflict with the TransientTransactionError label: drivers run the whole transaction again. */
    private static RawBsonDocument retryTransaction(String why) {
        return MongoError.WRITE_CONFLICT.reply(
                why + "; the transaction can be retried as a whole", List.of("TransientTransactionError"));
    }
}
