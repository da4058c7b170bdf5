package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** The evictor: a CronJob, one pass per run. */
public class EvictorSpec extends PodPlacement {

    @Pattern("^(@(hourly|daily|weekly|monthly|yearly)|(\\S+\\s+){4}\\S+)$")
    @Default("\"*/10 * * * *\"")
    @JsonPropertyDescription("Cron schedule of eviction passes.")
    public String schedule = "*/10 * * * *";

    @Min(1)
    @Max(100000)
    @Default("500")
    @JsonPropertyDescription("Documents deleted per batch.")
    public int batchSize = 500;

    @Min(1)
    @Default("5000")
    @JsonPropertyDescription("Rate limit, documents per second.")
    public int maxDocumentsPerSecond = 5000;

    @JsonPropertyDescription("CPU and memory of an evictor run.")
    public ResourceRequirements resources;
}
