package io.thermocline.proxy.tiered;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.mode.ModeExplain;
import io.thermocline.proxy.mode.ModeGate;
import io.thermocline.proxy.mode.ModeRoute;
import io.thermocline.proxy.mode.Modes;
import io.thermocline.proxy.mode.ShadowComparator;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.RoutingExplanation;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.TieredCursors;
import io.thermocline.proxy.tiered.exchange.TieringFollower;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/**
 * What the fleet's mode phase does to a tiered command beyond routing it ({@link ModeRoute} decides which): refused
 * while writes pause or the archive is restored, compared on the fast tier while shadowing, explained with its
 * routing, and a cursor ended across a restore. Apart from {@link TieredRouting} so the entry reads as the routing.
 */
final class ModePhases {

    private final Modes modes;
    private final CausalTiers tiers;
    private final TieredCursors cursors;
    private final TieringFollower follower;

    ModePhases(Modes modes, CausalTiers tiers, TieredCursors cursors, TieringFollower follower) {
        this.modes = modes;
        this.tiers = tiers;
        this.cursors = cursors;
        this.follower = follower;
    }

    /** The refusal of a tiered command while the phase refuses it (ModeRoute REFUSE): retryable, with why. */
    RawBsonDocument refusal(Exchange x, ModeGate.Ticket ticket) {
        String why = ticket.stale()
                ? "this Thermocline proxy cannot read the fleet's mode document; retry"
                : ticket.phase().reads() == io.thermocline.tiering.mode.Phase.Reads.REFUSED
                        ? "the archive is being restored from a backup (Thermocline phase Restoring): tiered collections answer"
                                + " again once thermocline restore-sync has finished; retry"
                        : "writes pause while the Thermocline fleet switches mode ("
                                + ticket.phase().documentName()
                                + (ticket.phase().writesRefused() ? "" : ", until every proxy follows")
                                + "); retry";
        return MongoError.EXCEEDED_TIME_LIMIT.reply(why, Replies.retryLabels(x));
    }

    /** Shadow mode: counts the read, and when sampled, compares it on the fast tier once the archive answered. */
    void shadowed(Exchange x, CommandClass cls, ModeGate.Ticket ticket) {
        if (ticket.phase() != io.thermocline.tiering.mode.Phase.SHADOWING
                || x.traits().inTransaction()
                || !(cls instanceof CommandClass.Read || cls instanceof CommandClass.Aggregate)) {
            return;
        }
        RoutingExplanation explanation = RoutingExplanation.of(cls, x.table());
        if (explanation.namespace() == null
                || x.table().policy(explanation.namespace()).isEmpty()) {
            return;
        }
        ShadowComparator shadow = modes.shadow();
        boolean couldAnswer = explanation.served() == RoutingExplanation.Served.FAST_TIER;
        if (shadow.sampled(explanation.namespace(), couldAnswer)) {
            BsonDocument command = x.command();
            ticket.onArchiveReply(reply -> shadow.offer(new ShadowComparator.Sample(
                    explanation.namespace(),
                    ModeExplain.shape(cls),
                    x.database(),
                    command,
                    reply,
                    ticket.epoch(),
                    x.table().coverage(explanation.namespace()))));
        }
    }

    RawBsonDocument modeExplain(Exchange x, CommandClass cls, ModeGate.Ticket ticket) throws InterruptedException {
        RoutingExplanation explanation = RoutingExplanation.of(cls, x.table());
        RawBsonDocument reply = tiers.archive(x, Replies.forTier(x.msg()));
        return ModeExplain.annotate(
                reply,
                explanation,
                ticket.phase(),
                ticket.phase() == io.thermocline.tiering.mode.Phase.SHADOWING
                        ? modes.shadow().lastAgreement(ModeExplain.shape(cls))
                        : Optional.empty());
    }

    /** See {@link TieredRouting#refusedCursorRound}. */
    Optional<RawBsonDocument> refusedCursorRound(
            long proxyCursorId,
            String namespace,
            boolean inTransaction,
            boolean openedBeforeRestore,
            ModeGate.Ticket ticket) {
        boolean continues = ModeRoute.cursorContinues(ticket.phase(), ticket.stale());
        if ((continues && !openedBeforeRestore)
                || (cursors.get(proxyCursorId) == null
                        && follower.table().policy(namespace).isEmpty())) {
            return Optional.empty();
        }
        cursors.closed(proxyCursorId);
        if (continues) {
            // as mongod answers a getMore on a collection dropped under it (mongorestore --drop): re-run the query
            return Optional.of(MongoError.QUERY_PLAN_KILLED.reply(
                    "this cursor was opened before the archive was restored from a backup (thermocline restore-sync)"
                            + " and read the state the restore replaced: it is ended; re-run the query",
                    List.of()));
        }
        String why = ticket.stale()
                ? "this Thermocline proxy cannot read the fleet's mode document, so it cannot tell whether the"
                        + " archive is being restored: this cursor is ended; re-run the query"
                : "the archive is being restored from a backup (Thermocline phase Restoring): this cursor, opened before, is ended;"
                        + " re-run the query once thermocline restore-sync has finished";
        return Optional.of(MongoError.EXCEEDED_TIME_LIMIT.reply(
                why, inTransaction ? List.of("TransientTransactionError") : List.of()));
    }
}
