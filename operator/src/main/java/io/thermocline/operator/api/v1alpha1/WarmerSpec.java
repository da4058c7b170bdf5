package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** The warmer: a Job, run again whenever the set of windows changes. */
public class WarmerSpec extends PodPlacement {

    @Min(1)
    @Max(100000)
    @Default("500")
    @JsonPropertyDescription("Documents copied per batch.")
    public int batchSize = 500;

    @Min(1)
    @Default("5000")
    @JsonPropertyDescription("Rate limit, documents per second, so the archive's disks are not starved.")
    public int maxDocumentsPerSecond = 5000;

    @JsonPropertyDescription("CPU and memory of a warmer run.")
    public ResourceRequirements resources;
}
