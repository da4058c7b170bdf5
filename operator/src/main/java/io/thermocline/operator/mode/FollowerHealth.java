package io.thermocline.operator.mode;

import static io.thermocline.operator.status.ConditionType.FollowerHealthy;

import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.Observed;
import java.util.Optional;

/**
 * The {@code FollowerHealthy} condition, from the mode status: whether the archive follower keeps the fast tier in
 * step while the archive is authoritative. The fleet cuts over to tiered only once the follower has applied the
 * archive through the cutover point (writes on tiered collections are refused while it waits), and a shadow
 * comparison only once it has applied what the archive read saw: so a stopped, resyncing or lagging follower is
 * why a cutover waits, and each message says what to do. A pure function.
 */
public final class FollowerHealth {

    public static final String IN_STEP = "InStep";
    public static final String STOPPED = "FollowerStopped";
    public static final String RESYNCING = "FollowerResyncing";
    public static final String BEHIND = "FollowerBehind";
    public static final String LAG_UNKNOWN = "LagUnknown";

    private FollowerHealth() {
    }

    /**
     * Empty outside the archive-authoritative phases (Shadowing, CuttingOver, Drained: the follower runs only there).
     * {@code observed}: whether {@code status} was read from the fast tier just now (else it is the last one seen).
     */
    public static Optional<Observed> of(ModeStatus status, boolean observed, String unobservedWhy, ThermoclineCluster cluster) {
        if (status == null || status.follower == null) {
            return Optional.empty();
        }
        if (!observed) {
            return Optional.of(Observed.unknown(FollowerHealthy, ModeConditions.NOT_OBSERVED, unobservedWhy));
        }
        ModeStatus.Follower f = status.follower;
        String feeder = ClusterLayout.of(cluster).feeder();
        int bound = cluster.getSpec().feeder.maxFollowerLagSeconds;
        String waits = consequence(status.phase);
        ModeStatus.Resync resync = f.resync;
        boolean resyncRunning = resync != null && Boolean.TRUE.equals(resync.running);
        if (!Boolean.TRUE.equals(f.running)) {
            String last = f.holder == null ? "no feeder process has taken it yet"
                    : "last held by " + f.holder + ", term " + f.term + ", until " + f.leaseExpiresAt;
            return Optional.of(Observed.isFalse(FollowerHealthy, STOPPED, "the archive follower is not running: no feeder process"
                    + " holds its lease (" + last + ")" + (resyncRunning ? "; its resync started at " + resync.startedAt
                    + " stopped midway, and the next holder starts it again" : "") + "; " + waits + ". Check the " + feeder
                    + " Deployment and its logs (event=archive_follower_*): it runs the follower"));
        }
        if (resyncRunning) {
            return Optional.of(Observed.isFalse(FollowerHealthy, RESYNCING, "the archive follower (" + f.holder + ") is resyncing"
                    + " the fast tier from the archive since " + resync.startedAt + " (" + resync.reason + "): " + resync.copied
                    + " document(s) copied and " + resync.deleted + " deleted so far; " + waits + ". Wait for it to finish"
                    + (resync.count != null && resync.count > 1 ? "; this is resync " + resync.count + ": if they repeat, the"
                    + " archive's oplog window is shorter than a resync, enlarge it (replSetResizeOplog)" : "")));
        }
        if (f.lagSeconds == null) {
            return Optional.of(Observed.unknown(FollowerHealthy, LAG_UNKNOWN, "the archive follower (" + f.holder + ") runs, but"
                    + " its lag is unknown: " + (f.appliedThrough == null ? "it has applied nothing yet"
                    : "the archive's latest optime could not be read (see ArchiveReachable)")));
        }
        if (f.lagSeconds > bound) {
            return Optional.of(Observed.isFalse(FollowerHealthy, BEHIND, "the archive follower (" + f.holder + ") has applied the"
                    + " archive through " + f.appliedThrough + ", " + f.lagSeconds + " s behind " + f.archiveLatest
                    + " (spec.feeder.maxFollowerLagSeconds: " + bound + "); " + waits + ". It catches up by itself: look at the "
                    + feeder + " logs and the fast tier's load if it does not"));
        }
        return Optional.of(Observed.isTrue(FollowerHealthy, IN_STEP, "the archive follower (" + f.holder + ", term " + f.term
                + ") has applied the archive through " + f.appliedThrough + ", " + f.lagSeconds + " s behind"));
    }

    /** What waits for the follower in this phase. */
    private static String consequence(String phase) {
        return switch (String.valueOf(phase)) {
            case ModeDocument.PHASE_CUTTING_OVER -> "the cutover waits for it: writes on tiered collections stay refused until"
                    + " it has applied the archive through the cutover point, or for 60 s, after which the fleet goes back";
            case ModeDocument.PHASE_DRAINED -> "a switch back to tiered waits for it: the cutover gate holds it back until the"
                    + " follower runs and is in step";
            default -> "shadow comparisons wait for it (and are skipped meanwhile), and the cutover gate holds a cutover to"
                    + " tiered back until the follower runs and is in step";
        };
    }
}
