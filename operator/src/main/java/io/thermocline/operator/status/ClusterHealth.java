package io.thermocline.operator.status;

import static io.thermocline.operator.status.ConditionType.ArchiveReachable;
import static io.thermocline.operator.status.ConditionType.FastTierReady;
import static io.thermocline.operator.status.ConditionType.FeederHealthy;
import static io.thermocline.operator.status.ConditionType.ProxyReady;
import static io.thermocline.operator.status.ConditionType.Ready;
import static io.thermocline.operator.status.ConditionType.ResourcesApplied;
import static io.thermocline.operator.status.ConditionType.VersionCompatible;
import static io.thermocline.operator.status.ConditionType.Warmed;

import io.fabric8.kubernetes.api.model.Condition;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.archive.VersionPolicy.VersionDecision;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Turns what the reconciler observed into conditions and a phase. A pure function, tested with tables. */
public final class ClusterHealth {

    public static final String PHASE_PENDING = "Pending";
    public static final String PHASE_PROGRESSING = "Progressing";
    public static final String PHASE_READY = "Ready";
    public static final String PHASE_DEGRADED = "Degraded";
    public static final String PHASE_PAUSED = "Paused";
    public static final String PHASE_FAILED = "Failed";
    /** How a volume-resize problem starts (see VolumeExpansion): reported as VolumesNotResized, not as an API refusal. */
    private static final String VOLUMES = "fast-tier volumes: ";

    private ClusterHealth() {}

    /**
     * Replica counts of a workload: desired and ready; {@code null} workload = not created. {@code notReadyCause}: what a
     * not-ready pod itself says is wrong (the proxy's /health/ready), null when unknown.
     */
    public record Replicas(int desired, int ready, String notReadyCause) {
        public Replicas(int desired, int ready) {
            this(desired, ready, null);
        }

        boolean all() {
            return ready >= desired;
        }

        public Replicas withNotReadyCause(String cause) {
            return new Replicas(desired, ready, cause);
        }
    }

    /** Everything observed in one reconcile. Null fields mean "not observed / does not exist". */
    public record Inputs(
            boolean paused,
            String specProblem,
            ArchiveReport archive,
            VersionDecision version,
            Replicas fastTier,
            ReplicaSetState replicaSet,
            Replicas proxy,
            Replicas feeder,
            TieringSnapshot tiering,
            int maxLagSeconds,
            String previousPhase,
            List<String> rejected,
            Pausing pausing,
            Warmer warmer,
            Observed lastFeederObservation) {

        public Inputs {
            rejected = rejected == null ? List.of() : List.copyOf(rejected);
        }

        /** The feeder runs until a pause has drained it. */
        boolean feederStopped() {
            return paused && pausing == null;
        }
    }

    /** A pause under way: writes are stopped first, then the feeder mirrors the rest, then it stops too. */
    public record Pausing(String reason, String message) {}

    /** The warmer Job of the current windows: its name, and how it ended (null while it runs). */
    public record Warmer(String job, Boolean succeeded, String failure) {}

    public record Health(List<Observed> conditions, String phase) {
        public boolean ready() {
            return conditions.stream().anyMatch(c -> c.type() == Ready && c.holds());
        }
    }

    static final String MISSING_PRIVILEGES = "MissingPrivileges";
    /** The FeederHealthy reasons that come from reading the feeder's progress in the fast tier (not from its Deployment). */
    private static final Set<String> FEEDER_OBSERVATIONS =
            Set.of("Mirroring", "DeadLetters", "LagTooHigh", "ChangeStreamHistoryLost", "ArchiveUnavailable");

    /**
     * The FeederHealthy last derived from the feeder's progress, to stand while the progress cannot be read (a replica set
     * being reconfigured, restarted members, an operator restart): dead letters and lag stay reported rather than turning
     * into a claim that all is well. Null when there is none.
     */
    public static Observed lastFeederObservation(List<Condition> previous) {
        Condition c = Conditions.find(previous, FeederHealthy);
        return c == null || !FEEDER_OBSERVATIONS.contains(c.getReason())
                ? null
                : new Observed(FeederHealthy, Observed.Status.valueOf(c.getStatus()), c.getReason(), c.getMessage());
    }

    public static Health evaluate(Inputs in) {
        List<Observed> out = new ArrayList<>();
        Observed archive = in.archive() instanceof ArchiveReport.Reachable r
                ? r.privileges().missing().isEmpty()
                        ? Observed.isTrue(
                                ArchiveReachable,
                                "Reachable",
                                "replica set " + r.replicaSetName() + " answers, MongoDB " + r.version())
                        : Observed.isFalse(
                                ArchiveReachable,
                                MISSING_PRIVILEGES,
                                "the archive Secret's user lacks "
                                        + String.join("; ", r.privileges().missing())
                                        + "; the cluster is deployed, but the data plane fails"
                                        + " where it needs them")
                : Observed.isFalse(
                        ArchiveReachable,
                        ((ArchiveReport.Unusable) in.archive()).reason(),
                        ((ArchiveReport.Unusable) in.archive()).message());
        out.add(archive);
        Observed version = in.version() == null
                ? Observed.unknown(
                        VersionCompatible, "ArchiveUnreachable", "the archive's version is known once it is reachable")
                : in.version().compatible()
                        ? Observed.isTrue(
                                VersionCompatible,
                                in.version().reason(),
                                in.version().message())
                        : Observed.isFalse(
                                VersionCompatible,
                                in.version().reason(),
                                in.version().message());
        out.add(version);
        Observed fast = fastTier(in);
        out.add(fast);
        Observed proxy = workload(ProxyReady, in.proxy(), in.paused(), "proxy");
        out.add(proxy);
        Observed feeder = feeder(in);
        out.add(feeder);
        Observed applied = in.rejected().isEmpty()
                ? Observed.isTrue(ResourcesApplied, "Applied", "the API server accepted every object")
                : in.rejected().stream().allMatch(r -> r.startsWith(VOLUMES))
                        ? Observed.isFalse(ResourcesApplied, "VolumesNotResized", String.join("; ", in.rejected()))
                        : Observed.isFalse(
                                ResourcesApplied,
                                "ApiRejected",
                                "the API server refused " + String.join("; ", in.rejected())
                                        + "; the rest is still managed: undo the change that made it (an immutable field?) or fix the value");
        out.add(applied);
        if (in.warmer() != null) {
            out.add(warmed(in));
        }

        Observed ready;
        String phase;
        if (in.specProblem() != null) {
            ready = Observed.isFalse(Ready, "InvalidSpec", in.specProblem());
            phase = PHASE_FAILED;
        } else if (in.paused() && in.pausing() != null) {
            ready = Observed.isFalse(Ready, in.pausing().reason(), in.pausing().message());
            phase = PHASE_PROGRESSING;
        } else if (in.paused()) {
            ready = Observed.isFalse(
                    Ready,
                    "Paused",
                    "spec.paused is true: proxy and feeder scaled to 0 (the feeder once it had"
                            + " mirrored every write), evictor and warmer suspended");
            phase = PHASE_PAUSED;
        } else if (!archive.holds()) {
            boolean privileges = MISSING_PRIVILEGES.equals(archive.reason());
            ready = Observed.isFalse(
                    Ready, privileges ? "ArchivePrivilegesMissing" : "ArchiveNotReachable", archive.message());
            phase = in.fastTier() == null && !privileges ? PHASE_PENDING : PHASE_DEGRADED;
        } else if (!version.holds()) {
            ready = Observed.isFalse(Ready, "VersionIncompatible", version.message());
            phase = in.fastTier() == null ? PHASE_FAILED : PHASE_DEGRADED;
        } else if (!applied.holds()) {
            ready = Observed.isFalse(Ready, applied.reason(), applied.message());
            phase = PHASE_DEGRADED;
        } else if (fast.holds() && proxy.holds() && feeder.holds()) {
            ready = Observed.isTrue(Ready, "AllComponentsReady", "fast tier, proxy and feeder are ready");
            phase = PHASE_READY;
        } else {
            List<String> waiting = new ArrayList<>();
            for (Observed o : List.of(fast, proxy, feeder)) {
                if (!o.holds()) {
                    // the data plane's own cause, when a pod gave one: the Ready condition is what people read first
                    String cause = o.type() == ProxyReady
                                    && in.proxy() != null
                                    && in.proxy().notReadyCause() != null
                            ? ": " + in.proxy().notReadyCause()
                            : "";
                    waiting.add(o.type() + " (" + o.reason() + cause + ")");
                }
            }
            ready = Observed.isFalse(Ready, "ComponentsNotReady", "waiting for " + String.join(", ", waiting));
            phase = PHASE_READY.equals(in.previousPhase()) || PHASE_DEGRADED.equals(in.previousPhase())
                    ? PHASE_DEGRADED
                    : PHASE_PROGRESSING;
        }
        out.add(0, ready);
        return new Health(out, phase);
    }

    private static Observed fastTier(Inputs in) {
        if (in.fastTier() == null) {
            return Observed.isFalse(
                    FastTierReady,
                    "NotCreated",
                    "the fast tier is created once the archive is reachable and compatible");
        }
        if (in.replicaSet() instanceof ReplicaSetState.Converged c
                && in.fastTier().all()) {
            return Observed.isTrue(
                    FastTierReady, "ReplicaSetReady", c.configured().size() + " members ready and configured");
        }
        if (in.replicaSet() instanceof ReplicaSetState.Converging c) {
            return Observed.isFalse(FastTierReady, c.reason(), c.message());
        }
        if (in.replicaSet() instanceof ReplicaSetState.RestartMember r) {
            return Observed.isFalse(FastTierReady, r.reason(), r.message());
        }
        if (!in.fastTier().all()) {
            return Observed.isFalse(
                    FastTierReady,
                    "MembersNotReady",
                    in.fastTier().ready() + "/" + in.fastTier().desired()
                            + " fast-tier members ready (primary or secondary);" + " see the pods' events");
        }
        return Observed.isFalse(
                FastTierReady, "ReplicaSetPending", "members are up; the replica set is configured next");
    }

    private static Observed warmed(Inputs in) {
        Warmer w = in.warmer();
        if (Boolean.TRUE.equals(w.succeeded())) {
            return Observed.isTrue(Warmed, "Completed", "warmer Job " + w.job() + " copied what the windows cover");
        }
        if (w.failure() != null) {
            return Observed.isFalse(
                    Warmed,
                    "WarmerFailed",
                    "warmer Job " + w.job() + " failed after its retries (" + w.failure()
                            + "); reads the fast tier cannot answer yet go to the archive. See kubectl logs job/"
                            + w.job()
                            + ", fix the cause, then kubectl delete job " + w.job() + ": the operator starts it again");
        }
        if (in.paused()) {
            return Observed.unknown(
                    Warmed, "Paused", "warmer Job " + w.job() + " is suspended while spec.paused is true");
        }
        return Observed.unknown(Warmed, "Warming", "warmer Job " + w.job() + " is copying what the windows cover");
    }

    private static Observed workload(ConditionType type, Replicas replicas, boolean paused, String what) {
        if (paused) {
            return Observed.isFalse(type, "Paused", "the " + what + " is scaled to 0 while spec.paused is true");
        }
        if (replicas == null) {
            return Observed.isFalse(
                    type, "NotCreated", "the " + what + " is created once the archive is reachable and compatible");
        }
        if (replicas.ready() == 0 || !replicas.all()) {
            return Observed.isFalse(
                    type,
                    "ReplicasNotReady",
                    replicas.ready() + "/" + replicas.desired() + " " + what
                            + " replicas ready; "
                            + (replicas.notReadyCause() == null
                                    ? "see the pods' events and logs"
                                    : replicas.notReadyCause()));
        }
        return Observed.isTrue(
                type, "Available", replicas.ready() + "/" + replicas.desired() + " " + what + " replicas ready");
    }

    private static Observed feeder(Inputs in) {
        Observed running = workload(FeederHealthy, in.feeder(), in.feederStopped(), "feeder");
        if (!running.holds()) {
            return running;
        }
        TieringSnapshot t = in.tiering();
        if (t == null) {
            return in.lastFeederObservation() != null
                    ? in.lastFeederObservation()
                    : Observed.unknown(
                            FeederHealthy,
                            "NotObserved",
                            "the feeder is running; its lag and dead letters are read from"
                                    + " the fast tier's metadata once its replica set answers");
        }
        if (t.feederAlerts().resyncing()) {
            return Observed.isFalse(
                    FeederHealthy,
                    "ChangeStreamHistoryLost",
                    "the fast tier's oplog no longer held the feeder's"
                            + " resume point (detected " + t.feederAlerts().historyLostAt()
                            + "): the feeder is resyncing the archive from the"
                            + " fast tier, nothing is lost, archive-routed reads wait until it is done; to avoid it, size the fast tier's oplog"
                            + " to outlast the feeder's longest outage (see docs/tiering-workers.md, Lost change-stream history)");
        }
        TieringSnapshot.ArchiveOutage outage = t.feederAlerts().archiveUnavailable();
        if (outage != null) {
            // the cause of the lag, named: an outage (or a refusal) of the archive, not a fault of the feeder
            boolean refusing = "refusing_writes".equals(outage.why());
            return Observed.isFalse(
                    FeederHealthy,
                    "ArchiveUnavailable",
                    (refusing
                                    ? "the archive refuses the feeder's writes"
                                    : "archive outage: the archive is " + outage.why())
                            + " since " + outage.since() + " (" + outage.cause()
                            + "); the fast tier keeps every write and"
                            + " the feeder retries until the archive takes them, nothing is lost; "
                            + (refusing
                                    ? "free space or make the archive writable"
                                    : "the proxies serve hot traffic and refuse what needs the archive retryably; check the"
                                            + " archive's members")
                            + " (see docs/faults.md)");
        }
        if (t.feederAlerts().deadLetters() > 0) {
            return Observed.isFalse(
                    FeederHealthy,
                    "DeadLetters",
                    t.feederAlerts().deadLetters() + " mirror write(s) refused by the"
                            + " archive for good (oldest: " + t.feederAlerts().oldestDeadLetter()
                            + "); the fast tier keeps those documents"
                            + " (never evicted) but the archive lacks their latest version: fix the cause in the archive (the conflicting"
                            + " unique key, the validator), the feeder retries every minute and clears them; list them on the fast tier with"
                            + " db.getSiblingDB('thermocline').deadLetters.find() (see docs/tiering-workers.md, Dead letters)");
        }
        if (t.feederLagSeconds() != null && t.feederLagSeconds() > in.maxLagSeconds()) {
            return Observed.isFalse(
                    FeederHealthy,
                    "LagTooHigh",
                    "feeder lag exceeds spec.feeder.maxLagSeconds (" + in.maxLagSeconds()
                            + "s); check the archive's write capacity and the feeder's logs");
        }
        return Observed.isTrue(FeederHealthy, "Mirroring", "the feeder is running; its lag is status.feederLagSeconds");
    }
}
