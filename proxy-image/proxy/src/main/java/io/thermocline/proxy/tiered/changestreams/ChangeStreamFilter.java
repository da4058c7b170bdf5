package io.thermocline.proxy.tiered.changestreams;

import io.thermocline.proxy.routing.ReadRoute;
import io.thermocline.proxy.tiered.CausalTiers;
import io.thermocline.proxy.tiered.Exchange;
import io.thermocline.proxy.tiered.OwnTransactionLedger;
import io.thermocline.proxy.tiered.Replies;
import io.thermocline.proxy.tiered.RoutingMetrics;
import io.thermocline.proxy.tiered.RoutingMetrics.Served;
import io.thermocline.wire.OpMsg;
import io.thermocline.tiering.provenance.CopyMarks;
import java.util.Map;
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
 * user write, with the events of Thermocline's own transactions (copies, promotions, evictions) and the
 * inserts of copy-ups inside user-visible transactions ({@link CopyEvents}) taken out of each batch. A
 * delete of a document only the archive held runs on a copy in the fast tier, so its event is the fast
 * tier's own: in order, with a resume token any proxy replica can resume from.
 */
public final class ChangeStreamFilter {

    private final OwnTransactionLedger ledger;
    private final CausalTiers tiers;
    private final ExecutorService workers;
    private final Supplier<RoutingMetrics> metrics;
    /** The open application change streams (proxy cursor ids) and what each has passed of the transaction under way. */
    private final Map<Long, CopyEvents> open = new ConcurrentHashMap<>();

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
        CopyEvents cursor = new CopyEvents(resumed(x.command()));
        long id = Replies.cursorId(reply);
        if (id != 0) {
            open.put(id, cursor);
        }
        return withoutOwnWrites(reply, "firstBatch", cursor);
    }

    /** Whether the {@code $changeStream} stage resumes from a token (the stream may resume inside a transaction). */
    static boolean resumed(BsonDocument aggregate) {
        BsonValue pipeline = aggregate.get("pipeline");
        if (pipeline == null || !pipeline.isArray() || pipeline.asArray().isEmpty() || !pipeline.asArray().get(0).isDocument()) {
            return false;
        }
        BsonValue stage = pipeline.asArray().get(0).asDocument().get("$changeStream");
        return stage != null && stage.isDocument() && (stage.asDocument().containsKey("resumeAfter")
                || stage.asDocument().containsKey("startAfter"));
    }

    /** A getMore batch: an application change stream's loses Thermocline's own events; any other passes as it is. */
    public CompletableFuture<RawBsonDocument> nextBatch(long proxyCursorId, RawBsonDocument reply) {
        CopyEvents cursor = open.get(proxyCursorId);
        if (cursor == null) {
            return CompletableFuture.completedFuture(reply);
        }
        if (Replies.cursorId(reply) == 0) {
            open.remove(proxyCursorId);
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                return withoutOwnWrites(reply, "nextBatch", cursor);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return reply;
            }
        }, workers);
    }

    private RawBsonDocument withoutOwnWrites(RawBsonDocument reply, String batchField, CopyEvents stream)
            throws InterruptedException {
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument() || !cursor.asDocument().isArray(batchField)) {
            return reply;
        }
        BsonArray kept = new BsonArray();
        boolean dropped = false;
        for (BsonValue value : cursor.asDocument().getArray(batchField)) {
            if (value.isDocument() && left(value.asDocument(), stream)) {
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

    /**
     * Whether an event is left out: one of Thermocline's own transactions, or a copy-up's insert. Events outside
     * transactions, and events whose transaction fields the application's pipeline projected away, pass.
     */
    private boolean left(BsonDocument event, CopyEvents cursor) throws InterruptedException {
        BsonValue lsid = event.get("lsid");
        BsonValue txn = event.get("txnNumber");
        BsonValue time = event.get("clusterTime");
        if (lsid == null || !lsid.isDocument() || txn == null || !txn.isNumber() || time == null || !time.isTimestamp()) {
            return false;
        }
        long txnNumber = txn.asNumber().longValue();
        if (ledger.isOwn(txnNumber, time.asTimestamp())) {
            return true;
        }
        String operationType = event.isString("operationType") ? event.getString("operationType").getValue() : null;
        CopyMarks.Mark mark = CopyEvents.mayBeCopy(operationType) ? ledger.copies(txnNumber, time.asTimestamp()) : null;
        return cursor.isCopy(new CopyEvents.Transaction(time.asTimestamp(), txnNumber), operationType, document(event), mark);
    }

    /** The namespace and {@code _id} an event is about, or null. */
    private static CopyMarks.Copied document(BsonDocument event) {
        BsonValue ns = event.get("ns");
        BsonValue key = event.get("documentKey");
        if (ns == null || !ns.isDocument() || !ns.asDocument().isString("db") || !ns.asDocument().isString("coll")
                || key == null || !key.isDocument() || !key.asDocument().containsKey("_id")) {
            return null;
        }
        return new CopyMarks.Copied(ns.asDocument().getString("db").getValue() + "." + ns.asDocument().getString("coll").getValue(),
                key.asDocument().get("_id"));
    }
}
