package io.thermocline.proxy.tiered.writes;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.tiering.state.CoverageBound;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Inserts: forwarded as sent unless a document already holds one of the client-chosen {@code _id}s
 * ({@link InsertPath}). Both tiers are asked in one read each, fast tier first (none when every route is
 * provably hot); only then does the fast tier's unique index answer a duplicate as one database would.
 * On a collection with unique secondary indexes every insert runs guarded, with the documents holding its
 * keys ({@link UniqueIndexes}), so the fast tier's unique indexes see those of the archive too.
 */
final class Inserts {

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final Promotion promotion;
    private final RetryableReplies replies;
    private final GuardedWrite guarded;
    private final RouteCounter routes;
    private final WriteRaces races;
    private final UniqueIndexes uniques;

    Inserts(
            MongoClient fast,
            ArchiveReads archive,
            Promotion promotion,
            RetryableReplies replies,
            GuardedWrite guarded,
            RouteCounter routes,
            WriteRaces races,
            UniqueIndexes uniques) {
        this.fast = fast;
        this.archive = archive;
        this.promotion = promotion;
        this.replies = replies;
        this.guarded = guarded;
        this.routes = routes;
        this.races = races;
        this.uniques = uniques;
    }

    RawBsonDocument insert(WriteRequest x, CommandClass.Write write, CollectionPolicy policy, CoverageBound bound)
            throws InterruptedException {
        List<BsonValue> maybeExisting = new ArrayList<>();
        Reason reason = null;
        for (BsonDocument document : write.statements()) {
            WriteRoute route = WriteRouter.insert(document, policy, bound);
            if (route instanceof WriteRoute.PointWrite point) {
                maybeExisting.add(point.id());
                reason = route.reason();
            } else if (reason == null) {
                reason = route.reason();
            }
        }
        routes.decided(Served.FAST, reason == null ? Reason.INSERT_SERVER_ASSIGNS_ID : reason);
        // other documents holding a unique key these carry: guarded with them, so the fast tier's index sees them all
        // (and, with unique indexes, always guarded: its transaction checks the archive again after the write,
        // which closes the gap between these reads and the write: a holder inserted, mirrored and evicted in it)
        boolean unique = !uniques.of(write.namespace()).isEmpty();
        List<BsonValue> keyHolders = unique ? uniques.holders(write.namespace(), write.statements()) : List.of();
        if (maybeExisting.isEmpty() && !unique) {
            return x.fastTier().forwardAsSent();
        }
        List<BsonValue> existing = maybeExisting.isEmpty() ? List.of() : existing(write.namespace(), maybeExisting);
        races.reached(WriteRaces.Point.INSERT_IDS_LOOKED_UP);
        if (unique) {
            List<BsonValue> guardedIds = new ArrayList<>(existing);
            guardedIds.addAll(keyHolders);
            return guarded.run(x, write.namespace(), Replies.mutable(x.command()), guardedIds);
        }
        boolean retryable = x.traits().retryableWrite();
        return switch (InsertPath.of(
                !existing.isEmpty(), retryable, retryable && !existing.isEmpty() && sameDocuments(write, existing))) {
            case AS_SENT -> x.fastTier().forwardAsSent();
            case PROMOTE_THEN_AS_SENT -> retried(x, write.namespace(), existing);
            case GUARDED -> guarded.run(x, write.namespace(), Replies.mutable(x.command()), existing);
        };
    }

    /**
     * The ids that some document holds: the fast tier first, then the archive for the others. A
     * document acknowledged before this insert is in the fast tier at the first read, or was evicted
     * before it and the archive holds it at the second (the other order misses one that the feeder
     * mirrors and the evictor removes between the two reads).
     */
    private List<BsonValue> existing(String namespace, List<BsonValue> ids) {
        Set<BsonValue> inFast = TierQueries.idsIn(fast, null, namespace, ids);
        List<BsonValue> existing = new ArrayList<>(inFast);
        List<BsonValue> others = new ArrayList<>(ids);
        others.removeAll(inFast);
        if (!others.isEmpty()) {
            // refused at once while the archive is out of service: nothing written yet
            existing.addAll(TierQueries.idsIn(archive.client("insert"), null, namespace, others));
        }
        return existing;
    }

    /** Whether every existing document equals the one this insert carries for its {@code _id}. */
    private boolean sameDocuments(CommandClass.Write write, List<BsonValue> existing) {
        Map<BsonValue, BsonDocument> current = new HashMap<>();
        for (MongoClient tier : List.of(fast, archive.client("insert"))) {
            for (BsonDocument d : TierQueries.documents(tier, write.namespace(), existing)) {
                current.putIfAbsent(d.get("_id"), d);
            }
        }
        for (BsonDocument statement : write.statements()) {
            BsonValue id = statement.get("_id");
            if (id != null && existing.contains(id) && !statement.equals(current.get(id))) {
                return false;
            }
        }
        return true;
    }

    /**
     * A retryable insert whose documents already exist exactly as it carries them: most likely this
     * write's own first attempt, which went straight to the fast tier (nothing existed then) and whose
     * reply was lost. Only the fast tier knows whether it ran: with the documents promoted, the command
     * goes there as sent, and the fast tier either answers the retry with the first attempt's reply or
     * runs it now and refuses the promoted ids with E11000, as one database would. A reply the proxy
     * recorded for a guarded attempt comes first.
     */
    private RawBsonDocument retried(WriteRequest x, String namespace, List<BsonValue> existing) {
        Optional<RawBsonDocument> recorded = replies.replay(x);
        if (recorded.isPresent()) {
            return recorded.get();
        }
        promotion.ensureInFast(namespace, existing);
        return x.fastTier().forwardAsSent();
    }
}
