package io.thermocline.proxy.tiered.transactions;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.TransactionRoute;
import io.thermocline.proxy.routing.TransactionRouter;
import io.thermocline.proxy.routing.TransactionTier;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.session.TransactionPins;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.proxy.tiered.exchange.TierWork;
import io.thermocline.proxy.tiered.writes.TieredWrites;
import io.thermocline.tiering.cache.ExpiringCache;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Statements of client transactions that touch tiered data: the whole transaction runs on one tier,
 * the fast tier when every statement is provably hot (point statements on cold documents copy them
 * up inside the transaction), otherwise it is refused with the reason; the tier is pinned per session and
 * {@code txnNumber} until the transaction ends. A transaction on the archive passes through.
 * The pins are bounded and one no statement used for the session timeout is forgotten (a client that
 * never ends its transaction; the servers have aborted it by then, so a late statement fails there).
 */
public final class TransactionRouting {

    /** Runs a statement's work off the network threads, replying with the client's causal point. */
    @FunctionalInterface
    public interface Worker {
        CompletableFuture<RawBsonDocument> submit(Exchange x, TierWork work);
    }

    /** Runs a statement inside the client's transaction, with the copy-ups of its cold documents and its delete fences joining it. */
    @FunctionalInterface
    public interface Statements {
        RawBsonDocument inTransaction(Exchange x, String namespace, CommandClass statement, List<BsonValue> cold)
                throws InterruptedException;
    }

    private record PinnedTransaction(long txnNumber, TransactionTier tier) {}

    private final Statements statements;
    private final CausalTiers tiers;
    private final RoutingMetrics metrics;
    private final ExpiringCache<SessionKey, PinnedTransaction> transactions;

    public TransactionRouting(Statements statements, CausalTiers tiers, RoutingMetrics metrics) {
        this(statements, tiers, metrics, TransactionPins.DEFAULT_CAPACITY, SessionKey.TIMEOUT, System::nanoTime);
    }

    TransactionRouting(
            Statements statements,
            CausalTiers tiers,
            RoutingMetrics metrics,
            int capacity,
            Duration idle,
            LongSupplier nanoTime) {
        this.transactions = new ExpiringCache<>(capacity, idle, nanoTime);
        this.statements = statements;
        this.tiers = tiers;
        this.metrics = metrics;
    }

    /** Claims a transaction statement the fast tier runs (or refuses); empty passes it through to the archive. */
    public Optional<CompletableFuture<RawBsonDocument>> route(Exchange x, CommandClass cls, Worker worker) {
        if (x.session().isEmpty()) {
            return Optional.empty();
        }
        SessionKey key = x.session().get();
        PinnedTransaction pinned = transactions.get(key);
        if (pinned != null
                && (x.traits().txnNumber() == null
                        || pinned.txnNumber() != x.traits().txnNumber())) {
            transactions.remove(key);
            pinned = null;
        }
        if (x.traits().endsTransaction()) {
            transactions.remove(key);
            if (pinned == null || pinned.tier() == TransactionTier.ARCHIVE) {
                return Optional.empty();
            }
            return Optional.of(worker.submit(x, () -> tiers.fast(x, x.msg())));
        }
        if (cls instanceof CommandClass.CursorOwned || cls instanceof CommandClass.Session) {
            return Optional.empty();
        }
        TransactionRoute route = TransactionRouter.route(cls, x.table(), pinned == null ? null : pinned.tier());
        if (route instanceof TransactionRoute.Refused refused) {
            metrics.decided("transaction", Served.REFUSED, refused.reason());
            return Optional.of(refusal(refused.message()));
        }
        TransactionTier tier = route instanceof TransactionRoute.Run r ? r.tier() : TransactionTier.FAST;
        if (pinned == null && !x.traits().startsTransaction() && tier == TransactionTier.FAST) {
            return Optional.of(CompletableFuture.completedFuture(notStartedHere(x)));
        }
        transactions.put(key, new PinnedTransaction(x.traits().txnNumber(), tier));
        metrics.decided("transaction", tier == TransactionTier.FAST ? Served.FAST : Served.ARCHIVE, route.reason());
        if (tier == TransactionTier.ARCHIVE) {
            return Optional.empty();
        }
        if (route instanceof TransactionRoute.PromoteThenRun || TieredWrites.deletes(cls)) {
            // copy-ups of cold documents and the fences of deletes join the client's transaction
            List<BsonValue> cold = route instanceof TransactionRoute.PromoteThenRun promote ? promote.ids() : List.of();
            String namespace =
                    cls instanceof CommandClass.Write w ? w.namespace() : ((CommandClass.Read) cls).namespace();
            return Optional.of(worker.submit(x, () -> statements.inTransaction(x, namespace, cls, cold)));
        }
        return Optional.of(worker.submit(x, () -> tiers.fast(x, Replies.forTier(x.msg()))));
    }

    /**
     * A later statement of a transaction this replica never saw start (it reached another proxy replica
     * than its first statement, or this one restarted): the fast tier holds no such transaction, and
     * starting one there would split it. A mongos answers so too; the label lets the driver retry the
     * whole transaction.
     */
    private static RawBsonDocument notStartedHere(Exchange x) {
        return MongoError.NO_SUCH_TRANSACTION.reply(
                "transaction " + x.traits().txnNumber() + " of this session was not"
                        + " started through this proxy replica: a transaction's statements must reach the replica that ran its first"
                        + " one (drivers pin them in load-balanced mode); retry the transaction",
                List.of("TransientTransactionError"));
    }

    private static CompletableFuture<RawBsonDocument> refusal(String message) {
        return CompletableFuture.completedFuture(
                MongoError.OPERATION_NOT_SUPPORTED_IN_TRANSACTION.reply(message, List.of()));
    }
}
