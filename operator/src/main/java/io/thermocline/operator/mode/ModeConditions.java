package io.thermocline.operator.mode;

import static io.thermocline.operator.status.ConditionType.Drained;
import static io.thermocline.operator.status.ConditionType.ModeActive;

import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.status.Observed;
import java.util.List;
import java.util.Set;

/**
 * The {@code ModeActive} and {@code Drained} conditions, from the requested mode and the mode status. Their
 * Events are sent by {@link ModeEvents} (one per transition of the fleet), not per condition change.
 */
public final class ModeConditions {

    public static final String CUTOVER_REFUSED = "CutoverRefused";
    public static final String MODE_REFUSED = "ModeRefused";
    public static final String CUTTING_OVER = "CuttingOver";
    public static final String DRAINING = "Draining";
    public static final String SWITCHING = "Switching";
    public static final String RESTORING = "Restoring";
    public static final String NOT_OBSERVED = "FastTierNotReadable";
    public static final String NOT_DRAINING = "NotDraining";
    public static final Set<String> TYPES = Set.of(ModeActive.name(), Drained.name());

    private ModeConditions() {}

    /** {@code observed}: whether {@code status} was read from the fast tier just now (else it is the last one seen). */
    public static List<Observed> of(ClusterMode requested, ModeStatus status, boolean observed, String unobservedWhy) {
        if (!observed) {
            String last = status == null || status.active == null
                    ? ""
                    : " (last seen: " + status.active + ", " + status.phase + ")";
            return List.of(
                    Observed.unknown(ModeActive, NOT_OBSERVED, unobservedWhy + last),
                    Observed.unknown(Drained, NOT_OBSERVED, unobservedWhy + last));
        }
        return List.of(modeActive(requested, status), drained(status));
    }

    private static Observed modeActive(ClusterMode requested, ModeStatus s) {
        String asked = requested.value();
        if (asked.equals(s.active) && ModeDocument.settledPhase(s.active).equals(s.phase)) {
            return Observed.isTrue(
                    ModeActive, s.phase, "the fleet is " + s.active + " as requested, since " + s.since + chosen(s));
        }
        if (s.refusal != null) {
            boolean cutover = requested == ClusterMode.TIERED
                    && ClusterMode.SHADOW.value().equals(s.active);
            return Observed.isFalse(
                    ModeActive,
                    cutover ? CUTOVER_REFUSED : MODE_REFUSED,
                    s.refusal + (cutover ? " (set spec.modeOverride: true to cut over anyway)" : ""));
        }
        if (ModeDocument.PHASE_CUTTING_OVER.equals(s.phase)) {
            return Observed.isFalse(
                    ModeActive, CUTTING_OVER, "cutting over from shadow to tiered: the proxies switch together");
        }
        if (ModeDocument.PHASE_DRAINING.equals(s.phase)) {
            return Observed.isFalse(ModeActive, DRAINING, "draining: " + progress(s.drain));
        }
        if (ModeDocument.PHASE_RESTORING.equals(s.phase)) {
            return Observed.isFalse(
                    ModeActive,
                    RESTORING,
                    "held for a restore of the archive since " + s.since
                            + ": the tiered collections are refused (retryably) until restore-sync resets the fast tier (see Restoring)");
        }
        return Observed.isFalse(
                ModeActive,
                SWITCHING,
                asked + " is requested; the fleet is still " + s.active + " (" + s.phase + ")" + chosen(s));
    }

    /** Why this mode, when spec.mode did not name it. */
    private static String chosen(ModeStatus s) {
        return s.defaultReason == null ? "" : " (" + s.defaultReason + ")";
    }

    private static Observed drained(ModeStatus s) {
        if (ModeDocument.PHASE_DRAINED.equals(s.phase)) {
            return Observed.isTrue(
                    Drained,
                    ModeDocument.PHASE_DRAINED,
                    "the archive alone is current since "
                            + (s.drain != null && s.drain.drainedAt != null ? s.drain.drainedAt : s.since)
                            + ": applications may connect to it again, and the resource may be deleted");
        }
        if (ModeDocument.PHASE_DRAINING.equals(s.phase)) {
            return Observed.isFalse(Drained, DRAINING, progress(s.drain));
        }
        return Observed.isFalse(
                Drained,
                NOT_DRAINING,
                "the fleet is " + s.active
                        + ": the fast tier may hold writes the archive does not yet have; set spec.mode: draining to hand the archive back");
    }

    private static String progress(ModeStatus.Drain drain) {
        if (drain == null) {
            return "reads and writes go to the archive; waiting for the feeder to mirror what the fast tier still holds";
        }
        return "the feeder is "
                + (drain.feederLagSeconds == null
                        ? "?"
                        : String.format(java.util.Locale.ROOT, "%.1f", drain.feederLagSeconds))
                + " s behind with " + (drain.unmirroredEvents == null ? "?" : drain.unmirroredEvents)
                + " write(s) not yet in the archive"
                + (drain.startedAt == null ? "" : " (draining since " + drain.startedAt + ")");
    }

    /** Whether a condition type is one of these (its Events come from {@link ModeEvents}). */
    public static boolean isMode(String type) {
        return TYPES.contains(type);
    }
}
