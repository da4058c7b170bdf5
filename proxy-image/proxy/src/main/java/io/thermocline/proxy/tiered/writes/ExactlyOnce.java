package io.thermocline.proxy.tiered.writes;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Retryable updates and findAndModify updates run each statement once, whichever path each attempt takes:
 * forwarded as sent (the fast tier deduplicates it under the client's lsid and txnNumber) or guarded (the
 * proxy's own transaction, recorded in {@link RetryableReplies}). The coverage may move between an attempt
 * and its retry, so the two paths meet through {@link RetryClaims}: a guarded attempt first claims its
 * statements on the fast tier, and a forwarded attempt's reply shows a statement the proxy claimed.
 * Writes that every coverage routes guarded (point writes by {@code _id} alone) are never forwarded,
 * so their record alone suffices and they claim nothing.
 */
final class ExactlyOnce {

    private static final CoverageBound EVERYTHING = CoverageBound.from(Instant.MIN);

    private final GuardedWrite guarded;
    private final RetryClaims claims;
    private final WriteRaces races;

    ExactlyOnce(GuardedWrite guarded, RetryClaims claims, WriteRaces races) {
        this.guarded = guarded;
        this.claims = claims;
        this.races = races;
    }

    /** A guarded run of {@code command} (the client's, possibly rewritten) over {@code ids}, once per retryable statement. */
    RawBsonDocument guarded(
            WriteRequest x, String namespace, BsonDocument command, List<BsonValue> ids, CollectionPolicy policy)
            throws InterruptedException {
        if (!x.traits().retryableWrite() || x.traits().lsid() == null || alwaysGuarded(x.command(), policy)) {
            // decided on the client's command: a statement resolved to an _id (rewritten) was not always a point write
            return guarded.run(x, namespace, command, ids);
        }
        RetryClaims.Claimed claimed = claims.claim(x, statements(command));
        if (claimed.refused()) {
            return claimed.reply(); // the fast tier's verdict on this session and txnNumber (e.g. TransactionTooOld)
        }
        if (claimed.none()) {
            // an earlier attempt went to the fast tier as sent and ran: it answers the retry from its own record
            return x.fastTier().forwardAsSent();
        }
        return claimed.all()
                ? guarded.run(x, namespace, command, ids)
                : rest(x, namespace, command, ids, claimed.byProxy(), claimed.reply());
    }

    /** The client's command forwarded as sent; a statement the proxy has claimed is run guarded instead. */
    RawBsonDocument forwarded(WriteRequest x, String namespace, BsonDocument command, CollectionPolicy policy)
            throws InterruptedException {
        boolean retryable = x.traits().retryableWrite() && x.traits().lsid() != null;
        if (retryable) {
            races.reached(WriteRaces.Point.RETRY_FORWARDING); // another attempt may run and commit from here on
        }
        RawBsonDocument reply = x.fastTier().forwardAsSent();
        if (!retryable) {
            return reply;
        }
        List<Boolean> byProxy = RetryClaims.claimedIn(reply, statements(command));
        if (!byProxy.contains(true)) {
            return reply;
        }
        // another attempt of this write claimed these statements for a guarded run (its record keeps it to one)
        if (!byProxy.contains(false)) {
            return guarded(x, namespace, command, List.of(), policy);
        }
        return rest(x, namespace, command, List.of(), byProxy, reply);
    }

    /**
     * Some statements ran on the fast tier (their results in {@code base}), the others are the proxy's: those
     * run guarded, and the client gets both parts as one reply, recorded whole.
     */
    private RawBsonDocument rest(
            WriteRequest x,
            String namespace,
            BsonDocument command,
            List<BsonValue> ids,
            List<Boolean> byProxy,
            BsonDocument base)
            throws InterruptedException {
        BsonArray statements = command.getArray("updates");
        BsonArray owned = new BsonArray();
        for (int i = 0; i < statements.size(); i++) {
            if (byProxy.get(i)) {
                owned.add(statements.get(i));
            }
        }
        BsonDocument part = Replies.mutable(command);
        part.put("updates", owned);
        return guarded.run(x, namespace, part, ids, reply -> RetryClaims.combined(base, byProxy, reply));
    }

    /** Statements of an update command; a findAndModify is one. */
    static int statements(BsonDocument command) {
        return command.isArray("updates") ? command.getArray("updates").size() : 1;
    }

    /**
     * Whether every coverage routes each statement of the client's command as a point write (the guarded path):
     * then no attempt of the write is ever forwarded as sent, and there is nothing to claim.
     */
    static boolean alwaysGuarded(BsonDocument command, CollectionPolicy policy) {
        if (!command.isArray("updates")) {
            return WriteRouter.findAndModify(command, policy, EVERYTHING) instanceof WriteRoute.PointWrite;
        }
        List<BsonDocument> statements = new ArrayList<>();
        command.getArray("updates").forEach(s -> statements.add(s.asDocument()));
        return statements.stream()
                .allMatch(s -> WriteRouter.update(s, policy, EVERYTHING) instanceof WriteRoute.PointWrite);
    }
}
