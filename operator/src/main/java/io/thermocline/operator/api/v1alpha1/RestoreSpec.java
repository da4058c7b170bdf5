package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/**
 * A restore of the archive from its backup, run around the user's own restore (PBM, mongorestore, a snapshot):
 * {@code step: hold} before it, {@code step: resync} after it (docs/backup.md, "Kubernetes").
 */
public class RestoreSpec {

    @Required
    @Pattern("^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$")
    @JsonPropertyDescription(
            "Names this restore (e.g. the backup's name or a date). A new name starts a new restore; each step runs once per name.")
    public String name;

    @Required
    @JsonPropertyDescription(
            "hold: BEFORE touching the archive, stop the tiers and the feeder (status.restore.state Held when done). resync: AFTER the archive was restored, reset the fast tier to it, warm it, then cut over to spec.mode (tiered when unset). cancel: give up a hold before the archive was touched.")
    public RestoreStep step;

    public RestoreSpec() {}

    public RestoreSpec(String name, RestoreStep step) {
        this.name = name;
        this.step = step;
    }
}
