package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WiredTigerCacheTest {

    @ParameterizedTest(name = "limit {0} -> {1} GB")
    @CsvSource({"512Mi, 0.25", "1Gi, 0.25", "1536Mi, 0.25", "2Gi, 0.5", "4Gi, 1.5", "16Gi, 7.5", "3G, 0.89"})
    void halfOfTheLimitAboveOneGibWithAFloor(String limit, String gb) {
        assertThat(FastTierStatefulSetDependent.cacheSize(new ResourceRequirementsBuilder()
                .addToLimits("memory", new Quantity(limit)).build())).contains(gb);
    }

    @ParameterizedTest(name = "no memory limit -> mongod's default")
    @CsvSource({"cpu"})
    void noLimitNoFlag(String resource) {
        assertThat(FastTierStatefulSetDependent.cacheSize(new ResourceRequirementsBuilder()
                .addToLimits(resource, new Quantity("1")).build())).isEmpty();
        assertThat(FastTierStatefulSetDependent.cacheSize(null)).isEmpty();
    }
}
