package io.thermocline.operator.reconcile;

import static io.thermocline.operator.reconcile.Clusters.archiveSecret;
import static io.thermocline.operator.reconcile.Clusters.condition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.status.ConditionType;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.k3s.K3sContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Against a real API server (k3s): the checked-in CRD is accepted and its validation
 * rejects bad input, the reconciler (run in-process, server-side apply on) creates the
 * fast tier whose real mongod pods become ready, and deleting the resource garbage-collects
 * what it owns. Archive and replica-set access are faked: the test JVM cannot reach pod
 * DNS names. Needs Docker: {@code mvn -pl operator -am verify -Pe2e}.
 */
@Tag("e2e")
class K3sEndToEndTest {

    private static K3sContainer k3s;
    private static KubernetesClient client;
    private static Operator operator;

    @BeforeAll
    static void startCluster() throws IOException {
        Assumptions.assumeTrue(dockerAvailable(), "no Docker engine: k3s end-to-end test skipped");
        k3s = new K3sContainer(DockerImageName.parse("rancher/k3s:v1.31.4-k3s1"));
        k3s.start();
        client = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(k3s.getKubeConfigYaml())).build();
        try (InputStream crd = new FileInputStream(Path.of("..", "crds", "thermoclineclusters.thermocline.io-v1.yml").toFile())) {
            client.load(crd).serverSideApply();
        }
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> client.resources(ThermoclineCluster.class).inAnyNamespace().list() != null);

        ThermoclineClusterReconciler reconciler = new ThermoclineClusterReconciler();
        reconciler.archiveProbe = connection -> new ArchiveReport.Reachable("7.0.14", "archive-rs");
        reconciler.replicaSetConnector = new io.thermocline.operator.fakes.ReplicaSetModel();
        reconciler.tieringObserver = target -> Optional.empty();
        reconciler.settings = new OperatorSettings() {
            @Override
            public String dataPlaneImage() {
                return "ghcr.io/thermocline/thermocline:e2e";
            }

            @Override
            public Duration archiveProbeInterval() {
                return Duration.ofSeconds(30);
            }

            @Override
            public Duration replicaSetStepInterval() {
                return Duration.ofSeconds(1);
            }
        };
        operator = new Operator(o -> o.withKubernetesClient(client));
        operator.register(reconciler);
        operator.start();
    }

    @AfterAll
    static void stopCluster() {
        if (operator != null) {
            operator.stop();
        }
        if (client != null) {
            client.close();
        }
        if (k3s != null) {
            k3s.stop();
        }
    }

    @Test
    void realApiServerRejectsBadSpecsAndTheFastTierComesUp() {
        String ns = "e2e";
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();

        ThermoclineCluster bad = Clusters.cluster(ns, "bad");
        bad.getSpec().fastTier.members = 0;
        bad.getSpec().collections.get(0).hotWindow = "30 days";
        assertThatThrownBy(() -> client.resources(ThermoclineCluster.class).inNamespace(ns).resource(bad).create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.fastTier.members")
                .hasMessageContaining("hotWindow");

        ThermoclineCluster cluster = Clusters.cluster(ns, "e2e");
        cluster.getSpec().fastTier.members = 1;
        cluster.getSpec().fastTier.storage.size = "1Gi";
        client.resources(ThermoclineCluster.class).inNamespace(ns).resource(cluster).create();

        await().atMost(Duration.ofMinutes(5)).ignoreExceptions().untilAsserted(() -> {
            ThermoclineCluster c = client.resources(ThermoclineCluster.class).inNamespace(ns).withName("e2e").get();
            assertThat(condition(c, ConditionType.ArchiveReachable).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.FastTierReady).getStatus()).isEqualTo("True");
        });

        client.resources(ThermoclineCluster.class).inNamespace(ns).withName("e2e").delete();
        await().atMost(Duration.ofMinutes(2)).untilAsserted(() ->
                assertThat(client.resources(StatefulSet.class).inNamespace(ns).withName("e2e-fast").get()).isNull());
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            return false;
        }
    }
}
