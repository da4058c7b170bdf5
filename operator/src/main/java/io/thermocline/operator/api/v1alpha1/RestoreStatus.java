package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The last restore spec.restore asked for, step by step. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RestoreStatus {

    @JsonPropertyDescription("The spec.restore.name this reports.")
    public String name;

    @JsonPropertyDescription("The step last asked for: hold, resync or cancel.")
    public String step;

    @JsonPropertyDescription(
            "Holding, Held (restore the archive now, then step: resync), Resyncing, Warming, Restored, Cancelling, Cancelled or Failed.")
    public String state;

    @JsonPropertyDescription("The Job of the step (thermocline restore-sync), or the warmer Job while Warming.")
    public String job;

    @JsonPropertyDescription("What happened, and what to do next.")
    public String message;

    @JsonPropertyDescription("When the state last changed (RFC 3339).")
    public String since;

    @JsonPropertyDescription(
            "The last restore whose resync completed: the warmer Job that refills the fast tier after it is named after it.")
    public String lastResynced;
}
