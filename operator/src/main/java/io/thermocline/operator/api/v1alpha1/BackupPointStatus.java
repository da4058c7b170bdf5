package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The last backup point spec.backupPoint asked for, as {@code thermocline backup-point --json} reported it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BackupPointStatus {

    @JsonPropertyDescription("The spec.backupPoint.request this reports.")
    public String request;

    @JsonPropertyDescription("The Job running thermocline backup-point.")
    public String job;

    @JsonPropertyDescription(
            "Running, Reached, Refused (dead letters, the archive refusing writes, the feeder stopped or not advancing, a restore), TimedOut or Failed (the Job ended without a result).")
    public String state;

    @JsonPropertyDescription(
            "Reached: the archive time after which an archive backup is complete as of the request ({t, i} of the oplog timestamp: Atlas/Ops Manager's oplogTs and oplogInc).")
    public ArchiveTime archiveTime;

    @JsonPropertyDescription("Reached: archiveTime as RFC 3339.")
    public String archiveTimeIso;

    @JsonPropertyDescription(
            "Reached: archiveTime rounded up to the next second, for restore tools that take seconds (pbm restore --time).")
    public String restoreAtOrAfter;

    @JsonPropertyDescription(
            "Reached: every write acknowledged before this time (RFC 3339) is in the archive as of archiveTime.")
    public String acknowledgedBefore;

    @JsonPropertyDescription(
            "Refused or TimedOut: the data plane's reason, e.g. DEAD_LETTERS, ARCHIVE_REFUSES_WRITES, FEEDER_STOPPED.")
    public String reason;

    @JsonPropertyDescription("What happened, in a sentence a person can act on.")
    public String message;

    @JsonPropertyDescription("When the operator saw the result (RFC 3339).")
    public String finishedAt;

    /** A MongoDB oplog timestamp: seconds and increment. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class ArchiveTime {
        public Long t;
        public Long i;

        public ArchiveTime() {}

        public ArchiveTime(Long t, Long i) {
            this.t = t;
            this.i = i;
        }
    }
}
