package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** The feeder: one Deployment replica tailing the fast tier's change stream. */
public class FeederSpec extends PodPlacement {

    @Min(1)
    @Max(100000)
    @Default("1000")
    @JsonPropertyDescription("Writes mirrored to the archive per bulk write.")
    public int batchSize = 1000;

    @Pattern("^[0-9]+(ms|s|m)$")
    @Default("100ms")
    @JsonPropertyDescription("Longest wait to fill a batch, e.g. 100ms.")
    public String maxBatchWait = "100ms";

    @Default("true")
    @JsonPropertyDescription("Coalesce repeated writes to one document within a batch.")
    public boolean coalesce = true;

    @Min(1)
    @Default("300")
    @JsonPropertyDescription("Lag in seconds above which FeederHealthy turns False.")
    public int maxLagSeconds = 300;

    @Min(1)
    @Default("60")
    @JsonPropertyDescription("Lag in seconds of the archive follower (which the feeder process runs in shadow mode) above which FollowerHealthy turns False.")
    public int maxFollowerLagSeconds = 60;

    @JsonPropertyDescription("CPU and memory of the feeder.")
    public ResourceRequirements resources;
}
