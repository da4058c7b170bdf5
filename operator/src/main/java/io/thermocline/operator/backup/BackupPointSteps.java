package io.thermocline.operator.backup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.thermocline.operator.api.v1alpha1.BackupPointSpec;
import io.thermocline.operator.api.v1alpha1.BackupPointStatus;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import java.io.IOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * spec.backupPoint as a pure decision: from the request, the last status and its Job's outcome, the status to report,
 * whether to start the Job, and the {@code BackupPointReached} condition. Each request runs once: a finished result
 * stays (its Job may be gone), a new request value asks for a new point.
 */
public final class BackupPointSteps {

    public static final String RUNNING = "Running";
    public static final String REACHED = "Reached";
    public static final String REFUSED = "Refused";
    public static final String TIMED_OUT = "TimedOut";
    public static final String FAILED = "Failed";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The status to report ({@code null}: none was ever asked), whether the Job is to be created, the condition. */
    public record Step(BackupPointStatus status, boolean start, Observed condition) {}

    private BackupPointSteps() {}

    public static Step decide(BackupPointSpec spec, BackupPointStatus previous, String job, JobRun run, Instant now) {
        if (spec == null
                || previous != null && spec.request.equals(previous.request) && !RUNNING.equals(previous.state)) {
            return new Step(previous, false, previous == null ? null : condition(previous));
        }
        BackupPointStatus s = new BackupPointStatus();
        s.request = spec.request;
        s.job = job;
        boolean start = false;
        if (run instanceof JobRun.Succeeded done) {
            read(s, done.output(), true);
        } else if (run instanceof JobRun.Failed failed) {
            read(s, failed.output(), false);
        } else {
            start = run instanceof JobRun.Absent;
            s.state = RUNNING;
            s.message = start
                    ? "starting thermocline backup-point (Job " + job + ")"
                    : "waiting until the archive holds every write acknowledged before the request (Job " + job
                            + "; its log shows the feeder's progress)";
        }
        if (!RUNNING.equals(s.state)) {
            s.finishedAt = now.truncatedTo(ChronoUnit.SECONDS).toString();
        }
        return new Step(s, start, condition(s));
    }

    /** The command's one JSON document (docs/backup.md): reached, refused or timedOut; anything else failed. */
    private static void read(BackupPointStatus s, String output, boolean succeeded) {
        JsonNode d = parse(output);
        String outcome = d == null ? null : d.path("outcome").asText(null);
        if (succeeded && "reached".equals(outcome) && d.path("archiveTime").has("t")) {
            s.state = REACHED;
            s.archiveTime = new BackupPointStatus.ArchiveTime(
                    d.path("archiveTime").path("t").asLong(),
                    d.path("archiveTime").path("i").asLong());
            s.archiveTimeIso = d.path("archiveTimeIso").asText(null);
            s.restoreAtOrAfter = d.path("restoreAtOrAfter").asText(null);
            s.acknowledgedBefore = d.path("acknowledgedBefore").asText(null);
            return;
        }
        if ("refused".equals(outcome) || "timedOut".equals(outcome)) {
            s.state = "refused".equals(outcome) ? REFUSED : TIMED_OUT;
            s.reason = d.path("reason").asText(null);
            s.message = d.path("message").asText(null);
            return;
        }
        s.state = FAILED;
        s.message = "the Job " + s.job + " ended without a backup point"
                + (output == null || output.isBlank()
                        ? " (no output; see its pod's log)"
                        : ": " + JobOutput.lastLines(output));
    }

    private static JsonNode parse(String output) {
        if (output == null || output.isBlank()) {
            return null;
        }
        try {
            JsonNode d = JSON.readTree(output.strip());
            return d != null && d.isObject() ? d : null;
        } catch (IOException e) {
            return null; // a log tail (the command failed before its JSON): reported as it is
        }
    }

    static Observed condition(BackupPointStatus s) {
        ConditionType type = ConditionType.BackupPointReached;
        String request = "backup point " + s.request + ": ";
        return switch (String.valueOf(s.state)) {
            case REACHED ->
                Observed.isTrue(
                        type,
                        REACHED,
                        request + "archive time " + s.archiveTimeIso + " (Timestamp("
                                + s.archiveTime.t + ", " + s.archiveTime.i + ")): every write acknowledged before "
                                + s.acknowledgedBefore
                                + " is in any archive backup whose consistency point is at or after it (PITR: restore to "
                                + s.restoreAtOrAfter + " or later)");
            case REFUSED ->
                Observed.isFalse(
                        type,
                        REFUSED,
                        request + "refused (" + s.reason + "): " + s.message
                                + "; remove the cause, then ask again with a new spec.backupPoint.request");
            case TIMED_OUT ->
                Observed.isFalse(
                        type,
                        TIMED_OUT,
                        request + s.message
                                + "; ask again with a new spec.backupPoint.request (and a longer timeoutSeconds)");
            case RUNNING -> Observed.isFalse(type, RUNNING, request + s.message);
            default -> Observed.isFalse(type, FAILED, request + s.message);
        };
    }
}
