package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The fleet's mode as the fast tier's mode document ({@code thermocline.state}, {@code _id: "mode"}) reports it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModeStatus {

    @JsonPropertyDescription("The mode last requested (by spec.mode, or by the data plane's config or CLI).")
    public String requested;

    @JsonPropertyDescription("spec: spec.mode names the mode; default: spec.mode is unset, so the operator chose the starting mode (see defaultReason) and the fleet keeps the mode it has.")
    public String source;

    @JsonPropertyDescription("With source default: why the cluster started in the mode it did, or that the fleet keeps the last request.")
    public String defaultReason;

    @JsonPropertyDescription("When it was requested (RFC 3339).")
    public String requestedAt;

    @JsonPropertyDescription("Who requested it: operator, config or cli.")
    public String requestedBy;

    @JsonPropertyDescription("True when the request cuts over without the shadow evidence (spec.modeOverride).")
    public Boolean override;

    @JsonPropertyDescription("What the whole fleet does now: shadow, tiered or draining.")
    public String active;

    @JsonPropertyDescription("Shadowing, CuttingOver, Tiered, Draining or Drained.")
    public String phase;

    @JsonPropertyDescription("When active/phase last changed (RFC 3339).")
    public String since;

    @JsonPropertyDescription("Bumps on every transition of the fleet.")
    public Long epoch;

    @JsonPropertyDescription("Why requested differs from active, in one sentence; absent when it does not.")
    public String refusal;

    @JsonPropertyDescription("The shadow comparisons of all proxy replicas (the evidence for cutover).")
    public Shadow shadow;

    @JsonPropertyDescription("Progress of a drain, while draining and once drained.")
    public Drain drain;

    @JsonPropertyDescription("The archive follower (it keeps the fast tier in step while the archive is authoritative: Shadowing, CuttingOver, Drained).")
    public Follower follower;

    /** The sums over every proxy replica's {@code thermocline.shadow} documents. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Shadow {
        @JsonPropertyDescription("Reads of tiered collections seen in shadow mode.")
        public Long reads;
        @JsonPropertyDescription("Reads the fast tier could have answered.")
        public Long wouldServe;
        @JsonPropertyDescription("Share of reads the fast tier would have served, in percent (one decimal).")
        public String wouldServePercent;
        @JsonPropertyDescription("Reads run on both tiers and compared.")
        public Long comparisons;
        @JsonPropertyDescription("Comparisons whose answers differed.")
        public Long divergences;
        @JsonPropertyDescription("When the last divergence was seen (RFC 3339); absent when never.")
        public String lastDivergence;
        @JsonPropertyDescription("The collection of the last divergence (db.coll).")
        public String lastDivergenceNamespace;
    }

    /** The data plane's drain progress ({@code drain} in the mode document). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Drain {
        @JsonPropertyDescription("Seconds the feeder is behind the fast tier's last write.")
        public Double feederLagSeconds;
        @JsonPropertyDescription("Fast-tier writes not yet mirrored to the archive.")
        public Long unmirroredEvents;
        @JsonPropertyDescription("When the drain started (RFC 3339).")
        public String startedAt;
        @JsonPropertyDescription("When the archive alone became current (RFC 3339); absent while draining.")
        public String drainedAt;
    }

    /** The data plane's archive follower ({@code thermocline.state} {@code _id: "archiveFollower"}) against the archive's latest optime. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Follower {
        @JsonPropertyDescription("True while a feeder process holds the follower's lease.")
        public Boolean running;
        @JsonPropertyDescription("The feeder process named in the lease (the last holder when the lease expired).")
        public String holder;
        @JsonPropertyDescription("The lease's term: it grows with every change of holder.")
        public Long term;
        @JsonPropertyDescription("When the lease runs out unless renewed (RFC 3339).")
        public String leaseExpiresAt;
        @JsonPropertyDescription("Every archive change up to this archive time is in the fast tier (RFC 3339).")
        public String appliedThrough;
        @JsonPropertyDescription("What the follower must reach, when this status was taken (RFC 3339): the archive's latest optime; while cutting over, the cutover point.")
        public String archiveLatest;
        @JsonPropertyDescription("archiveLatest minus appliedThrough, in seconds; absent when the archive could not be asked.")
        public Long lagSeconds;
        @JsonPropertyDescription("The last resync after lost change-stream history.")
        public Resync resync;
    }

    /** A resync of the fast tier from the archive (the archive's oplog no longer held the follower's resume point). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Resync {
        @JsonPropertyDescription("True until the resync ends.")
        public Boolean running;
        @JsonPropertyDescription("Resyncs since the follower's document was created.")
        public Long count;
        @JsonPropertyDescription("When this resync started (RFC 3339).")
        public String startedAt;
        @JsonPropertyDescription("When it ended (RFC 3339); absent while it runs.")
        public String finishedAt;
        @JsonPropertyDescription("Why it started, e.g. archive change stream history lost (code 286).")
        public String reason;
        @JsonPropertyDescription("Fast-tier documents replaced with the archive's version so far.")
        public Long copied;
        @JsonPropertyDescription("Fast-tier documents deleted because the archive no longer has them, so far.")
        public Long deleted;
    }
}
