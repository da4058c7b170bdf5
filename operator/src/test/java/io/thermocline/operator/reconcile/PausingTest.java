package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The steps of a pause, against the mock API server (the reconciler's use of them: ThermoclineClusterReconcilerTest). */
@EnableKubernetesMockClient(crud = true)
@Timeout(60)
class PausingTest {

    private static final TieringSnapshot DRAINED = new TieringSnapshot(0L, true, 10L, 10L);
    private static final TieringSnapshot DEAD_LETTERS = new TieringSnapshot(
            0L,
            true,
            10L,
            10L,
            List.of(),
            new TieringSnapshot.FeederAlerts(1, "shop.orders _id 9 upsert: E11000", null, false));

    KubernetesClient client;
    private final ClusterLayout layout = ClusterLayout.of(Clusters.cluster("ns", "c"));

    @Test
    void theFeederRunsUntilTheProxyPodsAreGoneAndTheArchiveHoldsEveryWrite() {
        AtomicInteger reads = new AtomicInteger();
        proxyPod("c-proxy-1");
        ClusterHealth.Pausing stopping = Pausing.step(client, layout, feeder(1), () -> {
            reads.incrementAndGet();
            return Optional.of(DRAINED);
        });
        assertThat(stopping.reason()).isEqualTo(Pausing.STOPPING_WRITES);
        assertThat(stopping.message()).contains("its 1 pod(s)");
        assertThat(reads)
                .as("the tiering is read only once no client can write")
                .hasValue(0);

        client.pods().inNamespace("ns").withName("c-proxy-1").delete();
        assertThat(Pausing.step(client, layout, feeder(1), () -> Optional.of(new TieringSnapshot(5L, false, 10L, 9L)))
                        .reason())
                .isEqualTo(Pausing.WAITING_FOR_FEEDER);
        assertThat(Pausing.step(client, layout, feeder(1), Optional::empty).reason())
                .as("a tiering that cannot be read is not drained")
                .isEqualTo(Pausing.WAITING_FOR_FEEDER);
        ClusterHealth.Pausing deadLetters = Pausing.step(client, layout, feeder(1), () -> Optional.of(DEAD_LETTERS));
        assertThat(deadLetters.reason()).isEqualTo(Pausing.DEAD_LETTERS);
        assertThat(deadLetters.message()).contains("E11000");
        // as the feeder reports them now: an open dead letter holds mirrored-through, so the drain is not complete
        TieringSnapshot heldByADeadLetter = new TieringSnapshot(
                5L,
                false,
                10L,
                9L,
                List.of(),
                new TieringSnapshot.FeederAlerts(1, "shop.orders _id 9 upsert: E11000", null, false));
        assertThat(Pausing.step(client, layout, feeder(1), () -> Optional.of(heldByADeadLetter))
                        .reason())
                .as("the dead letter is named, not a feeder that never catches up")
                .isEqualTo(Pausing.DEAD_LETTERS);
        assertThat(Pausing.step(client, layout, feeder(1), () -> Optional.of(DRAINED)))
                .isNull();
    }

    @Test
    void aFeederAlreadyStoppedOrAbsentStaysSo() {
        proxyPod("c-proxy-1");
        assertThat(Pausing.step(client, layout, feeder(0), Optional::empty)).isNull();
        assertThat(Pausing.step(client, layout, null, Optional::empty)).isNull();
    }

    @Test
    void onlyTheClustersOwnProxyPodsHoldThePause() {
        client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("other-proxy-1")
                        .withLabels(ClusterLayout.of(Clusters.cluster("ns", "other"))
                                .selector(ProxyDeploymentDependent.COMPONENT))
                        .endMetadata()
                        .build())
                .create();
        assertThat(Pausing.step(client, layout, feeder(1), () -> Optional.of(DRAINED)))
                .isNull();
    }

    private void proxyPod(String name) {
        client.pods()
                .inNamespace("ns")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT))
                        .endMetadata()
                        .build())
                .create();
    }

    private static Deployment feeder(int replicas) {
        return new DeploymentBuilder()
                .withNewMetadata()
                .withName("c-feeder")
                .withNamespace("ns")
                .endMetadata()
                .withNewSpec()
                .withReplicas(replicas)
                .endSpec()
                .build();
    }
}
