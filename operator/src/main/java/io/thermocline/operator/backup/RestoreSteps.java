package io.thermocline.operator.backup;

import io.thermocline.operator.api.v1alpha1.RestoreSpec;
import io.thermocline.operator.api.v1alpha1.RestoreStatus;
import io.thermocline.operator.api.v1alpha1.RestoreStep;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * spec.restore as a pure decision (docs/backup.md, "Kubernetes"): hold (a Job running {@code restore-sync --hold}), the
 * user's own restore of the archive, resync (a Job running {@code restore-sync}), a warmer run named after the restore,
 * then the operator's mode request cuts over. Each step of a restore runs once; one that failed runs again when its Job
 * is deleted. Resync and cancel never start while the hold's Job still runs: the hold is only safe once it returned
 * (the last feeder's lease ended). The data plane refuses a resync of a fleet that is not held, so a lost status never
 * lets one run unguarded.
 */
public final class RestoreSteps {

    public static final String HOLDING = "Holding";
    public static final String HELD = "Held";
    public static final String RESYNCING = "Resyncing";
    public static final String WARMING = "Warming";
    public static final String RESTORED = "Restored";
    public static final String CANCELLING = "Cancelling";
    public static final String CANCELLED = "Cancelled";
    public static final String FAILED = "Failed";
    /** The condition's reasons besides Restored: the state's name after "Restore". */
    public static final String RESTORE_FAILED = "RestoreFailed";

    public static final String RESTORE_CANCELLED = "RestoreCancelled";

    /** States a step's Job no longer decides: they stay when the Job is gone. */
    private static final Set<String> SETTLED = Set.of(HELD, RESTORED, CANCELLED);

    /** The step's Jobs and, per restore name, the warmer Job that refills the fast tier after its resync. */
    public record Jobs(
            Function<RestoreStep, String> names,
            Function<RestoreStep, JobRun> runs,
            Function<String, String> warmerNames,
            Function<String, JobRun> warmerRuns) {}

    /**
     * The status to report (null: no restore was ever asked), the step whose Job to create (null: none), the
     * {@code Restoring} condition, and whether the operator writes no mode request meanwhile (the restore owns the mode).
     */
    public record Step(RestoreStatus status, RestoreStep start, Observed condition, boolean holdsModeRequests) {

        /** The name of the last restore whose resync completed (names the warmer Job), null when none. */
        public String lastResynced() {
            return status == null ? null : status.lastResynced;
        }
    }

    private RestoreSteps() {}

    /** {@code fleetRestoring}: the mode document's phase is Restoring (held, whoever held it). */
    public static Step decide(
            RestoreSpec spec, RestoreStatus previous, Jobs jobs, boolean fleetRestoring, Instant now) {
        // a removed spec.restore leaves the restore where it is: the fleet may be held, and only a step moves it
        RestoreSpec asked = spec != null
                ? spec
                : previous == null || previous.name == null
                        ? null
                        : new RestoreSpec(previous.name, step(previous.step));
        if (asked == null || asked.step == null) {
            return new Step(previous, null, null, false);
        }
        boolean same = previous != null && asked.name.equals(previous.name);
        boolean sameStep = same && asked.step.value().equals(previous.step);
        RestoreStatus s = new RestoreStatus();
        s.name = asked.name;
        s.step = asked.step.value();
        s.lastResynced = previous == null ? null : previous.lastResynced;
        RestoreStep start = null;
        if (sameStep && SETTLED.contains(previous.state)) {
            s.state = previous.state;
            s.job = previous.job;
            s.message = previous.message;
        } else if (sameStep && WARMING.equals(previous.state)) {
            warming(s, jobs);
        } else {
            JobRun run = jobs.runs().apply(asked.step);
            s.job = jobs.names().apply(asked.step);
            boolean holdRunning =
                    asked.step != RestoreStep.HOLD && jobs.runs().apply(RestoreStep.HOLD) instanceof JobRun.Running;
            if (run instanceof JobRun.Absent && holdRunning) {
                s.state = HOLDING;
                s.job = jobs.names().apply(RestoreStep.HOLD);
                s.message = "step " + s.step + " waits until the hold returns (Job " + s.job + ")";
            } else if (run instanceof JobRun.Absent
                    && asked.step == RestoreStep.RESYNC
                    && !fleetRestoring
                    && !(sameStep || same && HELD.equals(previous.state))) {
                s.state = FAILED;
                s.message =
                        "step resync refused: the fleet is not held for a restore (status.mode.phase is not Restoring);"
                                + " set step: hold BEFORE restoring the archive, wait for state Held, restore it, then step: resync";
            } else if (run instanceof JobRun.Absent || run instanceof JobRun.Running) {
                start = run instanceof JobRun.Absent ? asked.step : null;
                s.state = switch (asked.step) {
                    case HOLD -> HOLDING;
                    case RESYNC -> RESYNCING;
                    case CANCEL -> CANCELLING;
                };
                s.message = running(asked.step, s.job);
            } else if (run instanceof JobRun.Failed failed) {
                s.state = FAILED;
                s.message = "step " + s.step + " failed (Job " + s.job + ")"
                        + (failed.output() == null || failed.output().isBlank()
                                ? ""
                                : ": " + JobOutput.lastLines(failed.output()))
                        + "; delete the Job to run the step again, or change the step";
            } else if (asked.step == RestoreStep.RESYNC) {
                s.lastResynced = asked.name;
                warming(s, jobs);
            } else {
                s.state = asked.step == RestoreStep.HOLD ? HELD : CANCELLED;
                s.message = asked.step == RestoreStep.HOLD
                        ? "the fleet is held: no proxy serves the tiered collections and no feeder writes the archive;"
                                + " restore the archive now, then set spec.restore.step: resync (or cancel, if the archive"
                                + " was not touched)"
                        : "the hold was given up: the fleet is back to Tiered, the feeder resumes from its checkpoint";
            }
        }
        s.since = previous != null && same && Objects.equals(previous.state, s.state) && previous.since != null
                ? previous.since
                : now.truncatedTo(ChronoUnit.SECONDS).toString();
        boolean holds =
                !RESTORED.equals(s.state) && !CANCELLED.equals(s.state) && !(spec == null && FAILED.equals(s.state));
        return new Step(s, start, condition(s), holds);
    }

    /** After the resync: the warmer Job named after the restore refills the fast tier from the restored archive. */
    private static void warming(RestoreStatus s, Jobs jobs) {
        String warmer = jobs.warmerNames().apply(s.name);
        JobRun run = jobs.warmerRuns().apply(s.name);
        s.job = warmer;
        if (run instanceof JobRun.Succeeded) {
            s.state = RESTORED;
            s.message = "the fast tier was reset to the restored archive and warmed from it; the operator requests"
                    + " spec.mode (tiered when unset)";
        } else if (run instanceof JobRun.Failed failed) {
            s.state = FAILED;
            s.message = "the warmer Job " + warmer + " failed"
                    + (failed.output() == null ? "" : ": " + JobOutput.lastLines(failed.output()))
                    + "; the restored archive answers every read meanwhile (Drained); delete the Job to warm again";
        } else {
            s.state = WARMING;
            s.message = "the restored archive answers every read (Drained); the warmer (Job " + warmer
                    + ") refills the fast tier, then the fleet cuts over";
        }
    }

    private static String running(RestoreStep step, String job) {
        return switch (step) {
            case HOLD ->
                "holding the fleet (thermocline restore-sync --hold, Job " + job + "): do not touch the archive"
                        + " until state is Held";
            case RESYNC ->
                "resetting the fast tier and the tiering metadata to the restored archive (thermocline"
                        + " restore-sync, Job " + job + ")";
            case CANCEL -> "giving up the hold (thermocline restore-sync --cancel, Job " + job + ")";
        };
    }

    static Observed condition(RestoreStatus s) {
        ConditionType type = ConditionType.Restoring;
        String message = "restore " + s.name + ": " + s.message;
        return switch (s.state) {
            case RESTORED -> Observed.isFalse(type, RESTORED, message);
            case CANCELLED -> Observed.isFalse(type, RESTORE_CANCELLED, message);
            case FAILED -> Observed.isTrue(type, RESTORE_FAILED, message);
            // prefixed: the Events share the reasons, and Warmed has its own Warming
            default -> Observed.isTrue(type, "Restore" + s.state, message);
        };
    }

    private static RestoreStep step(String value) {
        for (RestoreStep step : RestoreStep.values()) {
            if (step.value().equals(value)) {
                return step;
            }
        }
        return null;
    }
}
