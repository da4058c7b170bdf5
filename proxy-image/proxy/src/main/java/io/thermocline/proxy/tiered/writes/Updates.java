package io.thermocline.proxy.tiered.writes;

import static io.thermocline.proxy.tiered.writes.Statements.collation;
import static io.thermocline.proxy.tiered.writes.Statements.documentOrEmpty;
import static io.thermocline.proxy.tiered.writes.Statements.flag;
import static io.thermocline.proxy.tiered.writes.Statements.restricted;

import com.mongodb.client.model.Collation;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.wire.OpMsg;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Updates: every document a statement may change or create is resolved by {@code _id} (point writes
 * as routed, single writes through the archive after the sync barrier, multi writes in both tiers),
 * then the command runs guarded over them, split in chunks when it may change more than one
 * transaction should hold.
 */
final class Updates {

    /** Documents per transaction of a multi-document write split over several (transaction size limits). */
    static final int CHUNK = 1000;

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final SyncBarrier sync;
    private final GuardedWrite guarded;
    private final ExactlyOnce once;
    private final RouteCounter routes;
    private final UniqueIndexes uniques;

    Updates(
            MongoClient fast,
            ArchiveReads archive,
            SyncBarrier sync,
            GuardedWrite guarded,
            ExactlyOnce once,
            RouteCounter routes,
            UniqueIndexes uniques) {
        this.fast = fast;
        this.archive = archive;
        this.sync = sync;
        this.guarded = guarded;
        this.once = once;
        this.routes = routes;
        this.uniques = uniques;
    }

    RawBsonDocument update(WriteRequest x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound)
            throws InterruptedException {
        List<BsonDocument> sent = new ArrayList<>();
        List<BsonValue> touched = new ArrayList<>();
        boolean synced = false;
        List<UniqueKeys.UniqueIndex> unique = uniques.of(write.namespace());
        boolean keyMayChange = false; // then the update runs guarded, where a key only the archive holds is found
        for (BsonDocument statement : write.statements()) {
            keyMayChange |= UniqueKeys.mayChangeKey(unique, statement);
            WriteRoute route = WriteRouter.update(statement, policy, bound);
            routes.count(route);
            BsonDocument filter = documentOrEmpty(statement, "q");
            Collation collation = collation(statement);
            if (route instanceof WriteRoute.FastTier && UniqueKeys.mayChangeKey(unique, statement)) {
                touched.addAll(TierQueries.idsMatching(
                        fast, null, write.namespace(), filter, collation, flag(statement, "multi") ? 0 : 1));
            } else if (route instanceof WriteRoute.PointWrite point) {
                touched.add(point.id());
            } else if (route instanceof WriteRoute.ResolveOneThenPointWrite resolve) {
                if (!synced) {
                    sync.await();
                    synced = true;
                }
                BsonValue id = TierQueries.first(
                        archive.client("update"), write.namespace(), resolve.filter(), resolve.sort(), collation);
                if (id != null) {
                    touched.add(id);
                    statement = Replies.mutable(statement);
                    statement.put("q", restricted(filter, id));
                } else {
                    resolve.upsertId().ifPresent(touched::add);
                }
            } else if (route instanceof WriteRoute.BothTiers both) {
                // fast tier first, then archive: a matching document is in the fast tier at the first read, or
                // was evicted before it and the archive holds its latest version at the second, once the sync
                // barrier between them has mirrored the writes before the eviction (the evictor does not wait for them)
                touched.addAll(TierQueries.idsMatching(fast, null, write.namespace(), filter, collation, 0));
                sync.await();
                touched.addAll(TierQueries.idsMatching(
                        archive.client("update"), null, write.namespace(), filter, collation, 0));
                both.upsertId().ifPresent(touched::add);
            }
            sent.add(statement);
        }
        if (touched.isEmpty() && !keyMayChange) {
            return once.forwarded(x, write.namespace(), x.command(), policy);
        }
        BsonDocument command = Replies.mutable(x.command());
        command.put("updates", new BsonArray(sent));
        List<BsonValue> distinct = new ArrayList<>(new LinkedHashSet<>(touched));
        if (distinct.size() <= CHUNK) {
            return once.guarded(x, write.namespace(), command, touched, policy);
        }
        if (!splittable(sent, x.traits().retryableWrite())) {
            return MongoError.TRANSACTION_TOO_LARGE.reply(
                    "this update may change " + distinct.size()
                            + " documents of " + write.namespace()
                            + " that are not all in the fast tier; Thermocline applies such a"
                            + " write in one fast-tier transaction, limited to " + CHUNK
                            + " documents, and only a single multi-document"
                            + " update without upsert is split into several. Nothing was changed: narrow the filter (e.g. by "
                            + policy.ageField() + ") or send one updateMany per statement",
                    List.of());
        }
        return inChunks(x, write.namespace(), command, sent.get(0), distinct);
    }

    /**
     * Whether an update over more documents than one transaction holds may run as several: one multi
     * statement without upsert, not retryable (drivers do not retry a multi update, and a retry could not
     * resume a split one).
     */
    static boolean splittable(List<BsonDocument> statements, boolean retryable) {
        return statements.size() == 1
                && flag(statements.get(0), "multi")
                && !flag(statements.get(0), "upsert")
                && !retryable;
    }

    /**
     * A multi-document update over more documents than one transaction should hold: one guarded
     * transaction per chunk of the documents it may change (its filter restricted to them). One
     * database does not apply an updateMany atomically either (it yields between documents, and
     * concurrent readers see it half done), and drivers do not retry it. Counts are summed; a write
     * error stops it there, as it would stop one database's.
     */
    private RawBsonDocument inChunks(
            WriteRequest x, String namespace, BsonDocument command, BsonDocument statement, List<BsonValue> ids)
            throws InterruptedException {
        long n = 0;
        long modified = 0;
        BsonDocument unmet =
                null; // a chunk's unmet write concern: the client's reply carries it, as one database's would
        BsonDocument filter = documentOrEmpty(statement, "q");
        for (int from = 0; from < ids.size(); from += CHUNK) {
            List<BsonValue> chunk = ids.subList(from, Math.min(ids.size(), from + CHUNK));
            BsonDocument part = Replies.mutable(statement);
            part.put("q", restricted(filter, chunk));
            BsonDocument partCommand = Replies.mutable(command);
            partCommand.put("updates", new BsonArray(List.of(part)));
            RawBsonDocument reply = guarded.run(x, namespace, partCommand, chunk);
            if (!Replies.isOk(reply)) {
                return reply;
            }
            unmet = ClientWriteConcern.errorOf(reply, unmet);
            n += reply.getNumber("n", new BsonInt32(0)).longValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).longValue();
            if (reply.isArray("writeErrors") && !reply.getArray("writeErrors").isEmpty()) {
                BsonDocument stopped = Replies.mutable(reply);
                stopped.put("n", new BsonInt32((int) n));
                stopped.put("nModified", new BsonInt32((int) modified));
                return OpMsg.raw(stopped);
            }
        }
        return OpMsg.raw(ClientWriteConcern.withError(
                new BsonDocument("n", new BsonInt32((int) n))
                        .append("nModified", new BsonInt32((int) modified))
                        .append("ok", new BsonDouble(1)),
                unmet));
    }
}
