package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.fakes.RenderedCluster;
import io.thermocline.operator.layout.ClusterLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WiredTigerCacheTest {

    @ParameterizedTest(name = "limit {0} -> {1} GB")
    @CsvSource({"512Mi, 0.25", "1Gi, 0.25", "1536Mi, 0.25", "2Gi, 0.5", "4Gi, 1.5", "16Gi, 7.5", "3G, 0.89"})
    void halfOfTheLimitAboveOneGibWithAFloor(String limit, String gb) {
        assertThat(FastTierStatefulSetDependent.cacheSize(new ResourceRequirementsBuilder()
                        .addToLimits("memory", new Quantity(limit))
                        .build()))
                .contains(gb);
    }

    @ParameterizedTest(name = "no memory limit -> mongod's default")
    @CsvSource({"cpu"})
    void noLimitNoFlag(String resource) {
        assertThat(FastTierStatefulSetDependent.cacheSize(new ResourceRequirementsBuilder()
                        .addToLimits(resource, new Quantity("1"))
                        .build()))
                .isEmpty();
        assertThat(FastTierStatefulSetDependent.cacheSize(null)).isEmpty();
    }

    /** Without spec.fastTier.resources a mongod would be BestEffort, sized from the node's memory: the first OOM-killed. */
    @org.junit.jupiter.api.Test
    void anUnsetResourcesGivesEachMongodAMemoryLimitAndTheCacheFromIt() {
        ClusterLayout layout = new ClusterLayout("c", "ns");
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.archive.uriSecretRef = new SecretKeyRef("archive", null);
        spec.collections.add(new CollectionSpec("shop", "orders", "_id", "30d"));
        var sts = new FastTierStatefulSetDependent().desired(RenderedCluster.desired(layout, spec), null);
        var mongod = sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "mongod".equals(c.getName()))
                .findFirst()
                .orElseThrow();
        assertThat(mongod.getResources().getLimits())
                .containsEntry("memory", new Quantity("1Gi"))
                .doesNotContainKey("cpu");
        assertThat(mongod.getResources().getRequests())
                .containsEntry("memory", new Quantity("1Gi"))
                .containsKey("cpu");
        assertThat(String.join(" ", mongod.getCommand()) + " "
                        + String.join(" ", mongod.getArgs() == null ? java.util.List.of() : mongod.getArgs()))
                .contains("--wiredTigerCacheSizeGB 0.25");
    }
}
