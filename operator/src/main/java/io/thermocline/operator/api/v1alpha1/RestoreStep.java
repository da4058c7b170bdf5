package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The step of a restore of the archive that {@code spec.restore} asks for (docs/backup.md, "Kubernetes"). */
public enum RestoreStep {
    /** Before the archive is touched: {@code thermocline restore-sync --hold}. */
    @JsonProperty("hold")
    HOLD,
    /** After the archive was restored: {@code thermocline restore-sync}, then a warmer run, then the cutover. */
    @JsonProperty("resync")
    RESYNC,
    /** Give up a hold before the archive was touched: {@code thermocline restore-sync --cancel}. */
    @JsonProperty("cancel")
    CANCEL;

    /** The value in the spec. */
    public String value() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
