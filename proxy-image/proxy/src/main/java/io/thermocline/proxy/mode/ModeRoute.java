package io.thermocline.proxy.mode;

import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.tiering.mode.Phase;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Where a claimed command goes in the current phase, pure: the tiered path as before, the archive
 * unchanged (the archive-authoritative phases), refused with a retryable error (a write while the
 * fleet switches, also until every proxy follows a new phase, or a proxy that lost sight of the mode
 * document), or the proxy's own explain.
 */
public enum ModeRoute {
    TIERED,
    ARCHIVE,
    REFUSE,
    EXPLAIN;

    /** {@code fleetBehind}: a live proxy may still act on the previous phase (see {@link ModeGate.Ticket#fleetBehind}). */
    public static ModeRoute of(
            Phase phase,
            boolean stale,
            boolean fleetBehind,
            CommandClass cls,
            boolean inTransaction,
            String commandName) {
        if (stale || phase.reads() == Phase.Reads.REFUSED) {
            return REFUSE;
        }
        boolean writes = writes(cls, inTransaction, commandName);
        if ((phase.writesRefused() || fleetBehind) && writes) {
            return REFUSE;
        }
        if (phase.reads() == Phase.Reads.TIERED) {
            return TIERED;
        }
        if (cls instanceof CommandClass.Explain) {
            return EXPLAIN;
        }
        // DDL keeps both tiers' indexes and collections alike, as in tiered mode
        return cls instanceof CommandClass.Ddl ? TIERED : ARCHIVE;
    }

    /**
     * Whether a getMore may continue a cursor of a tiered read: not while the fleet is held for a restore, nor on a proxy
     * that lost sight of the mode document (it cannot know that no hold began). A cursor reads, so the phases' write rules
     * do not stop it.
     */
    public static boolean cursorContinues(Phase phase, boolean stale) {
        return !stale && phase.reads() != Phase.Reads.REFUSED;
    }

    /** Whether the command may change a tiered namespace (a transaction's commit applies its writes). */
    static boolean writes(CommandClass cls, boolean inTransaction, String commandName) {
        if (inTransaction && !"abortTransaction".equals(commandName)) {
            return !(cls instanceof CommandClass.Read);
        }
        if ("commitTransaction".equals(commandName)) {
            return true;
        }
        if (cls instanceof CommandClass.Write || cls instanceof CommandClass.Ddl) {
            return true;
        }
        return cls instanceof CommandClass.Aggregate a && outputs(a.pipeline());
    }

    private static boolean outputs(BsonArray pipeline) {
        for (BsonValue stage : pipeline) {
            if (stage.isDocument()) {
                BsonDocument s = stage.asDocument();
                if (s.containsKey("$out") || s.containsKey("$merge")) {
                    return true;
                }
            }
        }
        return false;
    }
}
