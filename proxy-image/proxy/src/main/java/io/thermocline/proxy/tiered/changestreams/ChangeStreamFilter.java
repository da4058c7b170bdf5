package io.thermocline.proxy.tiered.changestreams;

import io.thermocline.proxy.routing.ReadRoute;
import io.thermocline.proxy.tiered.CausalTiers;
import io.thermocline.proxy.tiered.Exchange;
import io.thermocline.proxy.tiered.OwnTransactionLedger;
import io.thermocline.proxy.tiered.Replies;
import io.thermocline.proxy.tiered.RoutingMetrics;
import io.thermocline.proxy.tiered.RoutingMetrics.Served;
import io.thermocline.wire.OpMsg;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Application change streams on tiered namespaces: served from the fast tier, whose oplog holds every
 * user write, with the events of Thermocline's own transactions (copies, promotions, evictions) taken
 * out of each batch.
 */
public final class ChangeStreamFilter {

    private final OwnTransactionLedger ledger;
    private final CausalTiers tiers;
    private final ExecutorService workers;
    private final Supplier<RoutingMetrics> metrics;
    private final Set<Long> open = ConcurrentHashMap.newKeySet();

    public ChangeStreamFilter(OwnTransactionLedger ledger, CausalTiers tiers, ExecutorService workers,
                              Supplier<RoutingMetrics> metrics) {
        this.ledger = ledger;
        this.tiers = tiers;
        this.workers = workers;
        this.metrics = metrics;
    }

    /** Opens the change stream on the fast tier; its first batch comes back without Thermocline's own writes. */
    public RawBsonDocument open(Exchange x, ReadRoute route) throws InterruptedException {
        ledger.start();
        metrics.get().decided("change_stream", Served.FAST, route.reason());
        RawBsonDocument reply = tiers.fast(x, Replies.forTier(x.msg()));
        long id = Replies.cursorId(reply);
        if (id != 0) {
            open.add(id);
        }
        return withoutOwnWrites(reply, "firstBatch");
    }

    /** A getMore batch: an application change stream's loses Thermocline's own events; any other passes as it is. */
    public CompletableFuture<RawBsonDocument> nextBatch(long proxyCursorId, RawBsonDocument reply) {
        if (!open.contains(proxyCursorId)) {
            return CompletableFuture.completedFuture(reply);
        }
        if (Replies.cursorId(reply) == 0) {
            open.remove(proxyCursorId);
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                return withoutOwnWrites(reply, "nextBatch");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return reply;
            }
        }, workers);
    }

    private RawBsonDocument withoutOwnWrites(RawBsonDocument reply, String batchField) throws InterruptedException {
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument() || !cursor.asDocument().isArray(batchField)) {
            return reply;
        }
        BsonArray kept = new BsonArray();
        boolean dropped = false;
        for (BsonValue value : cursor.asDocument().getArray(batchField)) {
            if (value.isDocument() && own(value.asDocument())) {
                dropped = true;
            } else {
                kept.add(value);
            }
        }
        if (!dropped) {
            return reply;
        }
        BsonDocument newCursor = Replies.mutable(cursor.asDocument());
        newCursor.put(batchField, kept);
        BsonDocument out = Replies.mutable(reply);
        out.put("cursor", newCursor);
        return OpMsg.raw(out);
    }

    private boolean own(BsonDocument event) throws InterruptedException {
        BsonValue lsid = event.get("lsid");
        BsonValue txn = event.get("txnNumber");
        BsonValue time = event.get("clusterTime");
        return lsid != null && lsid.isDocument() && txn != null && txn.isNumber()
                && time != null && time.isTimestamp() && ledger.isOwn(txn.asNumber().longValue(), time.asTimestamp());
    }
}
