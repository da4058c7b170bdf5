package io.thermocline.proxy.tiered.exchange;

import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.causal.ArchivePresent;
import io.thermocline.proxy.causal.CausalPoints;
import io.thermocline.proxy.causal.PointReadSkip;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.gateway.TierReply;
import io.thermocline.proxy.topology.ReadPreference;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.wire.OpMsg;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * The tiered path's calls to a tier, keeping each client's causal point: a fast-tier reply moves it,
 * and a read on the archive first passes the read barrier, then hands back the fast-tier time the
 * archive was known to hold.
 */
public final class CausalTiers {

    private final CausalPoints causal;
    private final ReadBarrier barrier;
    private final ArchivePresent archivePresent;
    private final TieredCursors cursors;
    private final TierGateways gateways;
    private final LongAdder speculativeCursorsKilled = new LongAdder();

    public CausalTiers(
            CausalPoints causal,
            ReadBarrier barrier,
            ArchivePresent archivePresent,
            TieredCursors cursors,
            TierGateways gateways) {
        this.causal = causal;
        this.barrier = barrier;
        this.archivePresent = archivePresent;
        this.cursors = cursors;
        this.gateways = java.util.Objects.requireNonNull(gateways, "gateways");
    }

    /** The gateway to each tier, given at construction by the server that built them ({@code TieredProxy.Layer}). */
    public TierGateways gateways() {
        return gateways;
    }

    /** {@code proxy.causalWaitTimeout}: the longest a read waits to know what it must see. */
    public java.time.Duration causalWaitTimeout() {
        return barrier.timeout();
    }

    /** Runs on the fast tier and moves the client's causal point to the reply's operation time. */
    public RawBsonDocument fast(Exchange x, OpMsg msg) {
        RawBsonDocument reply = gateways().fast().send(x.request(), msg).join().body();
        observed(x, Replies.operationTime(reply));
        return reply;
    }

    public void observed(Exchange x, BsonTimestamp fastTierTime) {
        causal.observed(x.session(), x.request().connectionId(), fastTierTime);
    }

    /**
     * Runs on the archive once it holds what the read must see ({@link ReadBarrier}). The reply's
     * {@code operationTime} becomes the fast-tier time the archive was known to hold: the client's
     * driver sends it back as {@code afterClusterTime}, a causal point any proxy replica can wait for.
     */
    public RawBsonDocument archive(Exchange x, OpMsg msg) throws InterruptedException {
        return onArchivePrimary(x, msg);
    }

    /**
     * As {@link #archive(Exchange, OpMsg)}, on any archive member that has applied what the read must see when
     * {@code secondaries} (a read preference allowing them) is present: see {@link #onCaughtUpMember}.
     */
    public RawBsonDocument archive(Exchange x, OpMsg msg, Optional<BsonDocument> secondaries)
            throws InterruptedException {
        if (secondaries.isEmpty()) {
            return onArchivePrimary(x, msg);
        }
        BsonTimestamp through = awaitCausalPoint(x);
        return archive(x, onCaughtUpMember(msg, secondaries), through);
    }

    /**
     * A read on the archive's primary past the read barrier. Where the barrier lets it ({@link
     * ReadBarrier#speculation}), the archive is asked at once, while the barrier reads the fast tier's present: the
     * answer is kept if the barrier says it reflects every write the read must see, otherwise dropped (its cursor killed
     * on the archive) and the read asked again once the barrier passed.
     */
    private RawBsonDocument onArchivePrimary(Exchange x, OpMsg msg) throws InterruptedException {
        Optional<ReadBarrier.Speculation> speculation =
                barrier.speculation(x.msg().commandName(), ReadNamespaces.of(x.database(), x.command()));
        if (speculation.isEmpty()) {
            return archive(x, msg, awaitCausalPoint(x));
        }
        CompletableFuture<RawBsonDocument> early =
                gateways().archive().send(x.request(), msg).thenApply(TierReply::body);
        ReadBarrier.Settled settled;
        try {
            settled = speculation.get().settle();
        } catch (InterruptedException | RuntimeException e) {
            drop(early);
            throw e;
        }
        if (settled instanceof ReadBarrier.Kept kept) {
            return answered(x, early.join(), kept.through());
        }
        drop(early);
        return archive(x, msg, ((ReadBarrier.Again) settled).await());
    }

    /** A speculative archive answer the client will not get: the cursor it opened, if any, is killed on the archive. */
    private void drop(CompletableFuture<RawBsonDocument> early) {
        early.thenAccept(reply -> {
            long cursor = Replies.cursorId(reply);
            if (cursor != 0) {
                gateways().archive().kill(cursor).thenAccept(killed -> {
                    if (killed) {
                        speculativeCursorsKilled.increment();
                    }
                });
            }
        });
    }

    /** Speculative archive answers dropped whose cursor the archive then reported killed. */
    public long speculativeCursorsKilled() {
        return speculativeCursorsKilled.sum();
    }

    /** As {@link #archiveWithoutWait(Exchange, OpMsg)}, possibly on a caught-up secondary. */
    public RawBsonDocument archiveWithoutWait(Exchange x, OpMsg msg, Optional<BsonDocument> secondaries)
            throws InterruptedException {
        BsonTimestamp through = barrier.skipped();
        return archive(x, onCaughtUpMember(msg, secondaries), through);
    }

    /**
     * The archive command of a read allowed on secondaries, once the barrier passed: the archive primary holds
     * everything the read must see, so the archive's present read now ({@link ArchivePresent}) is a point of the
     * archive's clock covering it. The command carries it as {@code afterClusterTime} with the read preference:
     * the forwarder then chooses only among members whose applied optime covers it (the primary when none does),
     * and the chosen member waits for it too. Without a reading (the primary did not answer) a preference that takes
     * the primary is served by it, and mode {@code secondary} gets a retryable error: never a secondary without a point.
     */
    private OpMsg onCaughtUpMember(OpMsg msg, Optional<BsonDocument> secondaries) throws InterruptedException {
        if (secondaries.isEmpty()) {
            return msg;
        }
        if (nothingToOffloadTo(secondaries.get())) {
            // the primary serves it whatever the point: the ping would only cost a round trip. The preference is
            // dropped so that a secondary appearing meanwhile is never chosen without a point.
            return onPrimary(msg);
        }
        Optional<BsonTimestamp> point = archivePresent.now();
        if (point.isEmpty()) {
            // no point, so no secondary can be proven to hold what the read must see: fail closed
            if (ReadPreference.parse(secondaries.get()).mode().acceptsPrimary()) {
                return onPrimary(msg);
            }
            throw new BackendUnavailableException(
                    "the archive primary did not answer for its present optime, so no archive"
                            + " secondary can be proven to hold every write this read must see (read preference "
                            + secondaries.get().toJson() + "); retry",
                    false);
        }
        BsonValue sent = msg.body().get("readConcern");
        BsonDocument readConcern =
                sent != null && sent.isDocument() ? Replies.mutable(sent.asDocument()) : new BsonDocument();
        readConcern.put("afterClusterTime", point.get());
        BsonDocument append = new BsonDocument("$readPreference", secondaries.get()).append("readConcern", readConcern);
        RawBsonDocument body = CommandEnvelope.edit(msg.body(), Map.of(), Set.of(), append);
        return new OpMsg(msg.requestId(), 0, 0, body, msg.sequences());
    }

    /** The command without its read preference: the primary serves it. */
    private static OpMsg onPrimary(OpMsg msg) {
        return new OpMsg(
                msg.requestId(),
                0,
                0,
                CommandEnvelope.edit(msg.body(), Map.of(), Set.of("$readPreference"), new BsonDocument()),
                msg.sequences());
    }

    /**
     * The archive has no secondary right now and the preference would fall back to the primary (offloading is
     * {@code secondaryPreferred}): no member but the primary can serve it. A mode that never takes the primary
     * ({@code secondary}) still reads the present, so a secondary that appears within the selection wait gets a point.
     */
    private boolean nothingToOffloadTo(BsonDocument preference) {
        TierTopology topology = gateways.archive().topology();
        return topology != null
                && topology.secondaries().isEmpty()
                && ReadPreference.parse(preference).mode().acceptsPrimary();
    }

    /**
     * A point read that {@link PointReadSkip} lets pass without waiting: the archive already holds every
     * write to its document.
     */
    public RawBsonDocument archiveWithoutWait(Exchange x, OpMsg msg) {
        return archive(x, msg, barrier.skipped());
    }

    /** Runs on the archive; {@code through}: the fast-tier time through which the archive holds every write, or null. */
    private RawBsonDocument archive(Exchange x, OpMsg msg, BsonTimestamp through) {
        barrier.refuseWhileArchiveOutOfService(x.traits().name()); // reads that skipped the barrier too
        return answered(x, onArchive(x, msg), through);
    }

    /** The archive's {@code reply}: its cursor a tiered one, its operationTime {@code through} (unless null). */
    private RawBsonDocument answered(Exchange x, RawBsonDocument reply, BsonTimestamp through) {
        if (through == null) {
            return reply;
        }
        cursors.opened(
                Replies.cursorId(reply),
                new TieredCursors.Archive(through),
                x.traits().noCursorTimeout());
        return Replies.withOperationTime(reply, through);
    }

    /**
     * Runs on the archive as is: no read barrier, no causal point, no tiered cursor (DDL, which the archive applies
     * before the fast tier).
     */
    public RawBsonDocument onArchive(Exchange x, OpMsg msg) {
        return gateways().archive().send(x.request(), msg).join().body();
    }

    BsonTimestamp awaitCausalPoint(Exchange x) throws InterruptedException {
        return barrier.await(
                x.msg().commandName(),
                ReadNamespaces.of(x.database(), x.command()),
                causal.point(x.session(), x.request().connectionId()),
                Replies.afterClusterTime(x.command()));
    }

    /**
     * Every tiered reply carries a fast-tier {@code operationTime} at or after the client's causal point
     * here: replies the proxy builds itself (guarded writes, tombstone deletes) have none of their own.
     * The driver sends it back as {@code afterClusterTime}, so another proxy replica can wait for it.
     */
    public RawBsonDocument withCausalPoint(Exchange x, RawBsonDocument reply) {
        BsonTimestamp point = causal.point(x.session(), x.request().connectionId());
        BsonTimestamp own = Replies.operationTime(reply);
        return point == null || own != null && own.compareTo(point) >= 0
                ? reply
                : Replies.withOperationTime(reply, point);
    }
}
