package io.thermocline.operator.mode;

import io.thermocline.operator.api.v1alpha1.ClusterMode;
import java.time.Instant;
import java.util.Date;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * The fast tier's {@code thermocline.state} document {@code _id: "mode"} (the MODES.md contract): the
 * request, what the fleet does now ({@code active}, {@code phase}), why they differ ({@code refusal}),
 * and the drain progress. {@code requested}/{@code active} are the raw values, so a value this operator
 * does not know is shown as it is rather than lost. {@code cutoverAt}: while cutting over, the archive optime the
 * archive follower must have applied before the fleet is tiered.
 */
public record ModeDocument(
        String requested,
        boolean override,
        String requestedBy,
        Instant requestedAt,
        String active,
        String phase,
        String refusal,
        Instant since,
        Long epoch,
        Long version,
        DrainProgress drain,
        BsonTimestamp cutoverAt) {

    public static final String ID = "mode";
    public static final String PHASE_SHADOWING = "Shadowing";
    public static final String PHASE_CUTTING_OVER = "CuttingOver";
    public static final String PHASE_TIERED = "Tiered";
    public static final String PHASE_DRAINING = "Draining";
    public static final String PHASE_DRAINED = "Drained";
    /** Held for a restore of the archive (thermocline restore-sync --hold): tiered collections refused until the resync. */
    public static final String PHASE_RESTORING = "Restoring";
    /** {@code requestedBy} of the requests restore-sync writes. */
    public static final String REQUESTED_BY_RESTORE = "restore-sync";

    /** {@code drain} of the mode document, kept by the data plane while draining. */
    public record DrainProgress(Double feederLagSeconds, Long unmirroredEvents, Instant startedAt, Instant drainedAt) {}

    /** A cluster created before modes existed has no document: it is tiered (MODES.md). */
    public static final ModeDocument MISSING = new ModeDocument(
            null, false, null, null, ClusterMode.TIERED.value(), PHASE_TIERED, null, null, null, null, null, null);

    public static ModeDocument parse(Document d) {
        if (d == null) {
            return MISSING;
        }
        String active = d.getString("active") == null ? ClusterMode.TIERED.value() : d.getString("active");
        String phase = d.getString("phase") == null ? PHASE_TIERED : d.getString("phase");
        DrainProgress drain = d.get("drain") instanceof Document p
                ? new DrainProgress(
                        p.get("feederLagSeconds") instanceof Number n ? n.doubleValue() : null,
                        p.get("unmirroredEvents") instanceof Number n ? n.longValue() : null,
                        instant(p.get("startedAt")),
                        instant(p.get("drainedAt")))
                : null;
        return new ModeDocument(
                d.getString("requested"),
                Boolean.TRUE.equals(d.getBoolean("override")),
                d.getString("requestedBy"),
                instant(d.get("requestedAt")),
                active,
                phase,
                d.getString("refusal"),
                instant(d.get("since")),
                number(d.get("epoch")),
                number(d.get("version")),
                drain,
                d.get("cutoverAt") instanceof BsonTimestamp t ? t : null);
    }

    /** Whether the fleet does what was asked, and has settled there (a drain is settled once Drained). */
    public boolean settled() {
        return requested == null || requested.equals(active) && phase.equals(settledPhase(active));
    }

    /** The archive takes the writes and the archive follower keeps the fast tier in step (the data plane's Phase). */
    public boolean archiveAuthoritative() {
        return PHASE_SHADOWING.equals(phase) || PHASE_CUTTING_OVER.equals(phase) || PHASE_DRAINED.equals(phase);
    }

    /** This document as it reads after {@code request} was written (a refusal of an earlier request no longer applies). */
    ModeDocument with(ModeRequest request, Instant at) {
        return new ModeDocument(
                request.mode().value(),
                request.override(),
                request.requestedBy(),
                at,
                active,
                phase,
                null,
                since,
                epoch,
                version == null ? 1 : version + 1,
                drain,
                cutoverAt);
    }

    /** The phase in which {@code mode} is settled (draining: Drained). */
    public static String settledPhase(String mode) {
        return switch (String.valueOf(ClusterMode.of(mode))) {
            case "SHADOW" -> PHASE_SHADOWING;
            case "DRAINING" -> PHASE_DRAINED;
            default -> PHASE_TIERED;
        };
    }

    private static Long number(Object value) {
        return value instanceof Number n ? n.longValue() : null;
    }

    private static Instant instant(Object value) {
        return value instanceof Date date ? date.toInstant() : null;
    }
}
