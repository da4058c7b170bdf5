package io.thermocline.operator.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.layout.ClusterLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The contract with the data plane: every example resource renders a config its own loader accepts. */
class DataPlaneConfigContractTest {

    private static final Path SAMPLES = Path.of("..", "examples", "samples");

    static Stream<Path> exampleClusters() throws IOException {
        try (Stream<Path> files = Files.list(SAMPLES)) {
            List<Path> clusters = files.filter(f -> f.toString().endsWith(".yaml"))
                    .filter(f -> read(f).contains("kind: ThermoclineCluster"))
                    .sorted()
                    .toList();
            assertThat(clusters).hasSizeGreaterThanOrEqualTo(2);
            return clusters.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("exampleClusters")
    void exampleRendersAConfigTheDataPlaneLoads(Path example) {
        ThermoclineCluster cluster = Serialization.unmarshal(read(example), ThermoclineCluster.class);
        ClusterLayout layout = new ClusterLayout(cluster.getMetadata().getName(), "shop");
        ThermoclineClusterSpec spec = cluster.getSpec();
        String yaml = DataPlaneConfig.toYaml(spec, layout);

        ThermoclineConfig loaded = ConfigLoader.parse(yaml, DataPlaneConfig.podEnvironment(
                "mongodb://u:p@archive-0:27017/?replicaSet=rs0", "mongodb://u:p@fast-0:27017/?replicaSet=x"));

        assertThat(loaded.collections()).hasSameSizeAs(spec.collections);
        for (CollectionSpec c : spec.collections) {
            assertThat(loaded.policyFor(c.database + "." + c.collection)).isPresent();
        }
        assertThat(loaded.fleet().replicas()).isEqualTo(spec.proxy.replicas);
        assertThat(loaded.fleet().peerService()).isEqualTo(layout.proxyPeers() + ".shop.svc");
        assertThat(loaded.fleet().poolSize(loaded.tiers().fast()))
                .isEqualTo((spec.proxy.connectionBudget.fastTier + spec.proxy.replicas - 1) / spec.proxy.replicas);
        assertThat(loaded.tiers().archive().connectionBudget()).isEqualTo(spec.proxy.connectionBudget.archive);
        assertThat(loaded.proxy().maxClientConnections()).isEqualTo(spec.proxy.maxClientConnections);
        assertThat(loaded.feeder().batchSize()).isEqualTo(spec.feeder.batchSize);
        assertThat(yaml).doesNotContain("mongodb://");
    }

    @Test
    void readConsistencyReachesTheProxyConfigLinearizableByDefault() {
        ClusterLayout layout = new ClusterLayout("c", "ns");
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.collections.add(new CollectionSpec("shop", "orders", "createdAt", "30d"));
        var env = DataPlaneConfig.podEnvironment("mongodb://a:1/?replicaSet=a", "mongodb://b:1/?replicaSet=b");
        assertThat(ConfigLoader.parse(DataPlaneConfig.toYaml(spec, layout), env).proxy().readConsistency())
                .isEqualTo(io.thermocline.config.ReadConsistency.LINEARIZABLE);
        spec.proxy.readConsistency = "session";
        String yaml = DataPlaneConfig.toYaml(spec, layout);
        assertThat(yaml).contains("readConsistency: session");
        assertThat(ConfigLoader.parse(yaml, env).proxy().readConsistency()).isEqualTo(io.thermocline.config.ReadConsistency.SESSION);
        spec.proxy.readConsistency = "eventual";
        assertThatThrownBy(() -> DataPlaneConfig.toYaml(spec, layout))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("linearizable").hasMessageContaining("session");
    }

    @Test
    void secondaryReadsReachesTheCollectionPolicyPrimaryByDefault() {
        ClusterLayout layout = new ClusterLayout("c", "ns");
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.collections.add(new CollectionSpec("shop", "orders", "createdAt", "30d"));
        spec.collections.add(new CollectionSpec("shop", "events", "at", "7d"));
        spec.collections.get(1).secondaryReads = "offload";
        var env = DataPlaneConfig.podEnvironment("mongodb://a:1/?replicaSet=a", "mongodb://b:1/?replicaSet=b");
        String yaml = DataPlaneConfig.toYaml(spec, layout);
        assertThat(yaml).contains("secondaryReads: offload");
        assertThat(ConfigLoader.parse(yaml, env).collections()).extracting(c -> c.collection() + "=" + c.secondaryReads())
                .containsExactly("orders=PRIMARY", "events=OFFLOAD");
        spec.collections.get(1).secondaryReads = "secondary";
        assertThatThrownBy(() -> DataPlaneConfig.toYaml(spec, layout))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("primary").hasMessageContaining("offload");
    }

    @Test
    void windowsAreRenderedAsDurations() {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.collections.add(new CollectionSpec("shop", "orders", "createdAt", "36h"));
        ThermoclineConfig config = DataPlaneConfig.render(spec, new ClusterLayout("c", "ns"));
        assertThat(config.collections().get(0).hotWindow()).isEqualTo(Duration.ofHours(36));
    }

    @Test
    void aZeroWindowIsRejectedByTheDataPlaneLoaderNamingTheField() {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.collections.add(new CollectionSpec("shop", "orders", "createdAt", "0d"));
        String yaml = DataPlaneConfig.toYaml(spec, new ClusterLayout("c", "ns"));
        assertThatThrownBy(() -> ConfigLoader.parse(yaml, DataPlaneConfig.podEnvironment("mongodb://a:1", "mongodb://b:1")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("collections[0].hotWindow");
    }

    @Test
    void warmerJobNameChangesWithTheWindowsOnly() {
        ClusterLayout layout = new ClusterLayout("c", "ns");
        ThermoclineClusterSpec a = new ThermoclineClusterSpec();
        a.collections.add(new CollectionSpec("shop", "orders", "createdAt", "30d"));
        ThermoclineClusterSpec sameWindowOtherRate = new ThermoclineClusterSpec();
        sameWindowOtherRate.collections.add(new CollectionSpec("shop", "orders", "createdAt", "720h"));
        sameWindowOtherRate.warmer.maxDocumentsPerSecond = 1;
        ThermoclineClusterSpec grown = new ThermoclineClusterSpec();
        grown.collections.add(new CollectionSpec("shop", "orders", "createdAt", "60d"));

        assertThat(DataPlaneConfig.warmerJobName(a, layout)).startsWith("c-warmer-")
                .isEqualTo(DataPlaneConfig.warmerJobName(sameWindowOtherRate, layout))
                .isNotEqualTo(DataPlaneConfig.warmerJobName(grown, layout));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
