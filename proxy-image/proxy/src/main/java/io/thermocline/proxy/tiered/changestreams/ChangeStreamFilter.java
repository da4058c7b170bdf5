package io.thermocline.proxy.tiered.changestreams;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.routing.ChangeStreamStage;
import io.thermocline.proxy.routing.ReadRoute;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.tiering.provenance.CopyMarks;
import io.thermocline.wire.OpMsg;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Application change streams on tiered namespaces: served from the fast tier, whose oplog holds every
 * user write, with the events of Thermocline's own transactions (copies, promotions, evictions) and the
 * inserts of copy-ups inside user-visible transactions ({@link CopyEvents}) taken out of each batch. A
 * delete of a document only the archive held runs on a copy in the fast tier, so its event is the fast
 * tier's own: in order, with a resume token any proxy replica can resume from. An {@code update} event whose
 * {@code updateLookup} found nothing in the fast tier gets the document where it is now ({@link UpdateLookups}): one
 * the evictor moved to the archive since the event is still the current document, as one replica set's lookup
 * returns it.
 */
public final class ChangeStreamFilter {

    private final OwnTransactionLedger ledger;
    private final CausalTiers tiers;
    private final ExecutorService workers;
    private final RoutingMetrics metrics;
    private final UpdateLookups lookups;
    /** The open application change streams (proxy cursor ids): what each has passed of the transaction under way. */
    private final Map<Long, Stream> open = new ConcurrentHashMap<>();

    /** An open application change stream: its copy-up state, and whether its update events carry a looked-up document. */
    private record Stream(CopyEvents copies, boolean looksUp) {}

    public ChangeStreamFilter(
            OwnTransactionLedger ledger,
            CausalTiers tiers,
            ExecutorService workers,
            RoutingMetrics metrics,
            UpdateLookups lookups) {
        this.ledger = ledger;
        this.tiers = tiers;
        this.workers = workers;
        this.metrics = metrics;
        this.lookups = lookups;
    }

    /** Opens the change stream on the fast tier; its first batch comes back without Thermocline's own writes. */
    public RawBsonDocument open(Exchange x, ReadRoute route) throws InterruptedException {
        ledger.start();
        metrics.decided("change_stream", Served.FAST, route.reason());
        RawBsonDocument reply = tiers.fast(x, Replies.forTier(x.msg()));
        Stream stream = new Stream(new CopyEvents(resumed(x.command())), looksUp(x.command()));
        long id = Replies.cursorId(reply);
        if (id != 0) {
            open.put(id, stream);
        }
        return withoutOwnWrites(reply, "firstBatch", stream);
    }

    /**
     * Whether the proxy may complete the {@code fullDocument} of update events the fast tier's lookup left null: the
     * stream asks {@code updateLookup}, and nothing after {@code $changeStream} but {@code $match} stages that do not
     * name {@code fullDocument} (a stage that reshaped or filtered on it ran on the fast tier's null).
     */
    static boolean looksUp(BsonDocument aggregate) {
        BsonValue pipeline = aggregate.get("pipeline");
        BsonValue stage = ChangeStreamStage.options(pipeline);
        if (stage == null
                || !stage.isDocument()
                || !stage.asDocument().isString("fullDocument")
                || !stage.asDocument().getString("fullDocument").getValue().equals("updateLookup")) {
            return false;
        }
        for (BsonValue later : pipeline.asArray().subList(1, pipeline.asArray().size())) {
            if (!later.isDocument()
                    || later.asDocument().size() != 1
                    || !later.asDocument().containsKey("$match")
                    || later.asDocument().toJson().contains("fullDocument")) {
                return false;
            }
        }
        return true;
    }

    /** Whether the {@code $changeStream} stage resumes from a token (the stream may resume inside a transaction). */
    static boolean resumed(BsonDocument aggregate) {
        BsonValue stage = ChangeStreamStage.options(aggregate.get("pipeline"));
        return stage != null
                && stage.isDocument()
                && (stage.asDocument().containsKey("resumeAfter")
                        || stage.asDocument().containsKey("startAfter"));
    }

    /** A getMore batch: an application change stream's loses Thermocline's own events; any other passes as it is. */
    public CompletableFuture<RawBsonDocument> nextBatch(long proxyCursorId, RawBsonDocument reply) {
        Stream stream = open.get(proxyCursorId);
        if (stream == null) {
            return CompletableFuture.completedFuture(reply);
        }
        if (Replies.cursorId(reply) == 0) {
            open.remove(proxyCursorId);
        }
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return withoutOwnWrites(reply, "nextBatch", stream);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return reply;
                    } catch (TierLagging e) {
                        // never an event without the document a replica set gives: the driver resumes
                        // the stream from the last event it returned, and the batch is read again
                        open.remove(proxyCursorId);
                        return MongoError.EXCEEDED_TIME_LIMIT.reply(
                                e.getMessage(), List.of("ResumableChangeStreamError"));
                    }
                },
                workers);
    }

    private RawBsonDocument withoutOwnWrites(RawBsonDocument reply, String batchField, Stream stream)
            throws InterruptedException {
        BsonValue cursor = reply.get("cursor");
        if (cursor == null || !cursor.isDocument() || !cursor.asDocument().isArray(batchField)) {
            return reply;
        }
        BsonArray kept = new BsonArray();
        boolean changed = false;
        for (BsonValue value : cursor.asDocument().getArray(batchField)) {
            if (value.isDocument() && left(value.asDocument(), stream.copies())) {
                changed = true;
            } else if (stream.looksUp() && value.isDocument() && lookupMissed(value.asDocument())) {
                kept.add(lookedUp(value.asDocument()));
                changed = true;
            } else {
                kept.add(value);
            }
        }
        if (!changed) {
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
        if (lsid == null
                || !lsid.isDocument()
                || txn == null
                || !txn.isNumber()
                || time == null
                || !time.isTimestamp()) {
            return false;
        }
        long txnNumber = txn.asNumber().longValue();
        if (ledger.isOwn(txnNumber, time.asTimestamp())) {
            return true;
        }
        String operationType = event.isString("operationType")
                ? event.getString("operationType").getValue()
                : null;
        CopyMarks.Mark mark = CopyEvents.mayBeCopy(operationType) ? ledger.copies(txnNumber, time.asTimestamp()) : null;
        return cursor.isCopy(
                new CopyEvents.Transaction(time.asTimestamp(), txnNumber), operationType, document(event), mark);
    }

    /** An update event whose lookup found nothing in the fast tier ({@code fullDocument: null}). */
    private static boolean lookupMissed(BsonDocument event) {
        return event.isString("operationType")
                && event.getString("operationType").getValue().equals("update")
                && event.isNull("fullDocument")
                && document(event) != null;
    }

    /** The event with the document's current version, or still null when one replica set's lookup finds none. */
    private BsonDocument lookedUp(BsonDocument event) throws InterruptedException {
        CopyMarks.Copied about = document(event);
        Optional<BsonDocument> current = lookups.current(about.namespace(), about.id());
        if (current.isEmpty()) {
            return event;
        }
        BsonDocument out = Replies.mutable(event);
        out.put("fullDocument", current.get());
        return out;
    }

    /** The namespace and {@code _id} an event is about, or null. */
    private static CopyMarks.Copied document(BsonDocument event) {
        BsonValue ns = event.get("ns");
        BsonValue key = event.get("documentKey");
        if (ns == null
                || !ns.isDocument()
                || !ns.asDocument().isString("db")
                || !ns.asDocument().isString("coll")
                || key == null
                || !key.isDocument()
                || !key.asDocument().containsKey("_id")) {
            return null;
        }
        return new CopyMarks.Copied(
                ns.asDocument().getString("db").getValue() + "."
                        + ns.asDocument().getString("coll").getValue(),
                key.asDocument().get("_id"));
    }
}
