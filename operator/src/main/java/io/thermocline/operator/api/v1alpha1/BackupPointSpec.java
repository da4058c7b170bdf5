package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** A backup point asked of the fleet ({@code thermocline backup-point}, docs/backup.md); its result is in status.backupPoint. */
public class BackupPointSpec {

    @Required
    @Pattern("^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$")
    @JsonPropertyDescription(
            "Any new value asks for a new backup point (e.g. the backup's name or a date); each value runs once.")
    public String request;

    @Min(1)
    @Max(86400)
    @Default("600")
    @JsonPropertyDescription("How long the point may wait for the feeder before it gives up (state TimedOut).")
    public int timeoutSeconds = 600;

    public BackupPointSpec() {}

    public BackupPointSpec(String request) {
        this.request = request;
    }
}
