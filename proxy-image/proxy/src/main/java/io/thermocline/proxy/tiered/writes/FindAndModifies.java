package io.thermocline.proxy.tiered.writes;

import static io.thermocline.proxy.tiered.writes.Statements.collation;
import static io.thermocline.proxy.tiered.writes.Statements.documentOrEmpty;
import static io.thermocline.proxy.tiered.writes.Statements.restricted;

import com.mongodb.client.model.Collation;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.writes.GuardedTransaction.Outcome;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Map;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * findAndModify: an update or upsert runs guarded over its one target (by {@code _id}, or the archive's
 * first match in the sort after the sync barrier), once per retryable attempt whichever path it takes
 * ({@link ExactlyOnce}); a {@code remove} is executed by the proxy, as a delete.
 */
final class FindAndModifies {

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final Fences fences;
    private final GuardedTransaction transactions;
    private final ExactlyOnce guarded;
    private final GuardedCopies copies;
    private final SyncBarrier sync;
    private final RouteCounter routes;
    private final UniqueIndexes uniques;

    FindAndModifies(
            MongoClient fast,
            ArchiveReads archive,
            Fences fences,
            GuardedTransaction transactions,
            ExactlyOnce guarded,
            GuardedCopies copies,
            SyncBarrier sync,
            RouteCounter routes,
            UniqueIndexes uniques) {
        this.fast = fast;
        this.archive = archive;
        this.fences = fences;
        this.transactions = transactions;
        this.guarded = guarded;
        this.copies = copies;
        this.sync = sync;
        this.routes = routes;
        this.uniques = uniques;
    }

    RawBsonDocument findAndModify(
            WriteRequest x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound)
            throws InterruptedException {
        BsonDocument command = write.statements().get(0);
        WriteRoute route = WriteRouter.findAndModify(command, policy, bound);
        routes.count(route);
        BsonDocument query = documentOrEmpty(command, "query");
        BsonDocument sort = documentOrEmpty(command, "sort");
        if (command.getBoolean("remove", BsonBoolean.FALSE).getValue()) {
            return remove(x, write.namespace(), route, query, sort, command);
        }
        if (route instanceof WriteRoute.PointWrite point) {
            return guarded.guarded(x, write.namespace(), Replies.mutable(x.command()), List.of(point.id()), policy);
        }
        if (route instanceof WriteRoute.ResolveOneThenPointWrite resolve) {
            sync.await();
            BsonValue id = TierQueries.first(
                    archive.client("findAndModify"), write.namespace(), query, sort, collation(command));
            if (id != null) {
                BsonDocument rewritten = Replies.mutable(x.command());
                rewritten.put("query", restricted(query, id));
                return guarded.guarded(x, write.namespace(), rewritten, List.of(id), policy);
            }
            if (resolve.upsertId().isPresent()) {
                return guarded.guarded(
                        x,
                        write.namespace(),
                        Replies.mutable(x.command()),
                        List.of(resolve.upsertId().get()),
                        policy);
            }
        }
        BsonDocument asStatement = new BsonDocument("u", command.get("update", new BsonDocument()))
                .append("upsert", command.getBoolean("upsert", BsonBoolean.FALSE));
        if (route instanceof WriteRoute.FastTier
                && UniqueKeys.mayChangeKey(uniques.of(write.namespace()), asStatement)) {
            // guarded, so a unique key the update gives its document is checked against the archive
            BsonValue id = TierQueries.first(fast, write.namespace(), query, sort, collation(command));
            return guarded.guarded(
                    x, write.namespace(), Replies.mutable(x.command()), id == null ? List.of() : List.of(id), policy);
        }
        return guarded.forwarded(x, write.namespace(), x.command(), policy);
    }

    /**
     * findAndModify with {@code remove}: the target is picked as routed, then removed in one transaction
     * that claims its fence first (as a delete does): from the fast tier when it holds the document, without
     * reading the archive, else ({@link ColdTarget}) the archive's version (its latest) is copied in and removed
     * there, so the fast tier's change stream shows the delete and the fast tier applies the projection to the reply.
     */
    private RawBsonDocument remove(
            WriteRequest x,
            String namespace,
            WriteRoute route,
            BsonDocument query,
            BsonDocument sort,
            BsonDocument command)
            throws InterruptedException {
        Collation collation = collation(command);
        BsonDocument fields = command.isDocument("fields") ? command.getDocument("fields") : null;
        return OpMsg.raw(transactions.run(x, true, Deletes.keptMoving(namespace), () -> {
            BsonValue target = target(namespace, route, query, sort, collation);
            if (target == null) {
                return session -> Outcome.committed(reply(null));
            }
            BsonDocument pinned = restricted(query, List.of(target));
            Map<BsonValue, Fence> fencesThen = fences.read(null, namespace, Fences.withDropFence(List.of(target)));
            Fence then = fencesThen.get(target);
            FindOneAndDeleteOptions options =
                    new FindOneAndDeleteOptions().projection(fields).collation(collation);
            return session -> {
                fences.claim(session, namespace, List.of(target));
                BsonDocument removed = Blocking.single(
                                TierQueries.collection(fast, namespace).findOneAndDelete(session, pinned, options))
                        .orElse(null);
                if (removed != null) {
                    fences.write(session, namespace, target, Fence.Kind.USER_DELETE);
                    return Outcome.committed(reply(removed));
                }
                if (!TierQueries.idsIn(fast, session, namespace, List.of(target))
                        .isEmpty()) {
                    return Outcome.committed(reply(null)); // the fast tier's version does not match
                }
                // only the archive may hold it: read there now, not before, so a remove of a document the fast tier
                // holds never needs the archive (served while it is out of service, as a delete is); read after the
                // fence, so an eviction after this read shows as a changed fence below
                BsonDocument archived = Blocking.single(
                                TierQueries.collection(archive.client("findAndModify"), namespace)
                                        .find(pinned)
                                        .collation(collation)
                                        .first())
                        .orElse(null);
                if (archived == null) {
                    return Outcome.committed(reply(null));
                }
                Map<BsonValue, Fence> fencesNow =
                        fences.read(session, namespace, Fences.withDropFence(List.of(target)));
                boolean dropping =
                        ColdTarget.dropMoved(fencesThen.get(Fence.namespaceId()), fencesNow.get(Fence.namespaceId()));
                return switch (ColdTarget.of(then, fencesNow.get(target))) {
                    case ALREADY_DELETED -> Outcome.committed(reply(null));
                    case START_OVER -> null;
                    case TOMBSTONE -> {
                        if (dropping) {
                            yield null; // a copy would recreate the collection being dropped: start over (then nothing
                            // to remove)
                        }
                        if (!copies.copyToDelete(session, namespace, List.of(archived))) {
                            yield null;
                        }
                        fences.write(session, namespace, target, Fence.Kind.USER_DELETE);
                        BsonDocument copyRemoved = Blocking.single(TierQueries.collection(fast, namespace)
                                        .findOneAndDelete(session, pinned, options))
                                .orElse(null);
                        yield copyRemoved == null ? null : Outcome.committed(reply(copyRemoved));
                    }
                };
            };
        }));
    }

    /** The document a remove targets, as routed: the fast tier's first match, the archive's after the sync barrier, or either. */
    private BsonValue target(
            String namespace, WriteRoute route, BsonDocument query, BsonDocument sort, Collation collation)
            throws InterruptedException {
        if (route instanceof WriteRoute.FastTier) {
            return TierQueries.first(fast, namespace, query, sort, collation);
        }
        if (route instanceof WriteRoute.ResolveOneThenPointWrite) {
            sync.await();
            return TierQueries.first(archive.client("findAndModify"), namespace, query, sort, collation);
        }
        BsonValue id = TierQueries.first(fast, namespace, query, sort, collation);
        return id != null ? id : TierQueries.first(archive.client("findAndModify"), namespace, query, sort, collation);
    }

    private static BsonDocument reply(BsonDocument value) {
        return new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(value == null ? 0 : 1)))
                .append("value", value == null ? BsonNull.VALUE : value)
                .append("ok", new BsonDouble(1));
    }
}
