package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What the data plane does with traffic (docs/operator.md, "Modes"); the mode document's {@code requested}/{@code active} values. */
public enum ClusterMode {
    /** The archive answers everything; the fast tier is compared out of band: the evidence for cutover. */
    @JsonProperty("shadow") SHADOW,
    /** The fast tier answers what its windows cover. */
    @JsonProperty("tiered") TIERED,
    /** The road back: the archive becomes authoritative again until the fast tier holds nothing unmirrored. */
    @JsonProperty("draining") DRAINING;

    /** The value in the spec and in the mode document. */
    public String value() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The mode a document value names; null for null or an unknown value (a newer data plane). */
    public static ClusterMode of(String value) {
        for (ClusterMode mode : values()) {
            if (mode.value().equals(value)) {
                return mode;
            }
        }
        return null;
    }
}
