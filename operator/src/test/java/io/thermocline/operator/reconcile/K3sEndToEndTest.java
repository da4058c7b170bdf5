package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.archiveSecret;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.credentials.DataPlanePart;
import io.thermocline.operator.fakes.ReplicaSetModel;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.fasttier.tls.CertificateAuthority;
import io.thermocline.operator.fasttier.tls.TlsMode;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.kit.FixedOperatorSettings;
import io.thermocline.operator.kit.UserEdits;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 * rejects bad input; the reconciler (run in-process, server-side apply on) creates a
 * three-member fast tier whose real mongod pods start; scaling up and down moves the real
 * StatefulSet one member at a time; a version change restarts the real pods (OnDelete) on
 * the new image; deletion scales the proxy to zero and waits for the feeder before the
 * objects go. Archive, replica-set and tiering access are faked (a {@link ReplicaSetModel}):
 * the test JVM cannot reach pod DNS names, so the real pods never turn ready (readiness
 * means PRIMARY or SECONDARY). Needs Docker: {@code mvn -pl operator -am verify -Pe2e};
 * skipped without a Docker engine.
 */
@Tag("e2e")
class K3sEndToEndTest {

    private static K3sContainer k3s;
    private static KubernetesClient client;
    private static Operator operator;
    private static final ReplicaSetModel MODEL = new ReplicaSetModel();
    private static final AtomicReference<String> ARCHIVE_VERSION = new AtomicReference<>("7.0.14");
    private static final AtomicBoolean DRAINED = new AtomicBoolean(false);
    private static final io.thermocline.operator.fakes.FakeModes MODES = new io.thermocline.operator.fakes.FakeModes();

    @BeforeAll
    static void startCluster() throws IOException {
        Assumptions.assumeTrue(dockerAvailable(), "no Docker engine: k3s end-to-end test skipped");
        k3s = new K3sContainer(DockerImageName.parse("rancher/k3s:v1.31.4-k3s1"));
        k3s.start();
        client = new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(k3s.getKubeConfigYaml()))
                .build();
        try (InputStream crd = new FileInputStream(Path.of("..", "crds", "thermoclineclusters.thermocline.io-v1.yml")
                .toFile())) {
            client.load(crd).serverSideApply();
        }
        await().atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> client.resources(ThermoclineCluster.class)
                                .inAnyNamespace()
                                .list()
                        != null);

        ThermoclineClusterReconciler reconciler = new ThermoclineClusterReconciler();
        reconciler.archiveProbe = connection -> new ArchiveReport.Reachable(ARCHIVE_VERSION.get(), "archive-rs");
        reconciler.replicaSetConnector = MODEL;
        reconciler.modeStore = MODES;
        reconciler.tieringObserver = target -> Optional.of(new TieringSnapshot(0L, DRAINED.get(), 0L, 0L));
        reconciler.settings = new FixedOperatorSettings(
                "ghcr.io/thermocline/thermocline:e2e",
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                Duration.ofSeconds(1),
                Duration.ofSeconds(1),
                Duration.ofMinutes(1));
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
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(ns)
                        .endMetadata()
                        .build())
                .create();
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();

        ThermoclineCluster bad = Clusters.cluster(ns, "bad");
        bad.getSpec().fastTier.members = 0;
        bad.getSpec().collections.get(0).hotWindow = "30 days";
        assertThatThrownBy(() -> client.resources(ThermoclineCluster.class)
                        .inNamespace(ns)
                        .resource(bad)
                        .create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.fastTier.members")
                .hasMessageContaining("hotWindow");

        ThermoclineCluster cluster = Clusters.cluster(ns, "e2e");
        cluster.getSpec().fastTier.members = 3;
        cluster.getSpec().fastTier.spreadMembers =
                "preferred"; // one k3s node: required anti-affinity would leave two Pending
        cluster.getSpec().fastTier.storage.size = "1Gi";
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .resource(cluster)
                .create();
        await().atMost(Duration.ofMinutes(5)).ignoreExceptions().untilAsserted(() -> {
            assertThat(MODEL.configured()).hasSize(3);
            assertThat(startedMongods(ns)).isEqualTo(3);
        });

        edit(ns, c -> c.getSpec().fastTier.members = 5);
        await().atMost(Duration.ofMinutes(5)).ignoreExceptions().untilAsserted(() -> {
            assertThat(MODEL.configured()).hasSize(5);
            assertThat(startedMongods(ns)).isEqualTo(5);
        });
        edit(ns, c -> c.getSpec().fastTier.members = 3);
        await().atMost(Duration.ofMinutes(5)).ignoreExceptions().untilAsserted(() -> {
            assertThat(client.apps()
                            .statefulSets()
                            .inNamespace(ns)
                            .withName("e2e-fast")
                            .get()
                            .getSpec()
                            .getReplicas())
                    .isEqualTo(3);
            assertThat(MODEL.configured()).hasSize(3);
        });
        assertThat(MODEL.violations()).isEmpty();

        ARCHIVE_VERSION.set("7.0.15");
        await().atMost(Duration.ofMinutes(10))
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(client.pods()
                                .inNamespace(ns)
                                .withLabel("app.kubernetes.io/component", "fast-tier")
                                .list()
                                .getItems())
                        .hasSize(3)
                        .allSatisfy(p -> assertThat(
                                        p.getSpec().getContainers().get(0).getImage())
                                .isEqualTo("mongo:7.0.15")));

        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("e2e")
                .delete();
        await().atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(client.apps()
                                .deployments()
                                .inNamespace(ns)
                                .withName("e2e-proxy")
                                .get()
                                .getSpec()
                                .getReplicas())
                        .isZero());
        // positive signals first: a deletion pass found writes unmirrored (its Event), then a whole pass after it ended
        // (each pass reads the mode document first)
        await().atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(
                                client.v1().events().inNamespace(ns).list().getItems())
                        .extracting(e -> e.getReason())
                        .contains("DeletionWaitingForFeeder"));
        long reads = MODES.controller(ns, "e2e").reads();
        await().atMost(Duration.ofMinutes(1))
                .until(() -> MODES.controller(ns, "e2e").reads() >= reads + 2);
        assertThat(client.resources(ThermoclineCluster.class)
                        .inNamespace(ns)
                        .withName("e2e")
                        .get())
                .as("held until the feeder mirrored everything")
                .isNotNull();
        DRAINED.set(true);
        await().atMost(Duration.ofMinutes(2))
                .untilAsserted(() -> assertThat(client.resources(StatefulSet.class)
                                .inNamespace(ns)
                                .withName("e2e-fast")
                                .get())
                        .isNull());
        assertThat(client.secrets().inNamespace(ns).withName("e2e-users").get())
                .as("Retain keeps the credentials")
                .isNotNull();
    }

    /**
     * The twin of {@code FastTierTlsReconcileTest}'s new-cluster case and {@code PartUsersTest}'s leak check on a real
     * API server and real mongod: the members start at {@code requireTLS} on the operator's own CA and certificate
     * (a certificate mongod refuses, or a missing file, crash-loops the container), and each part's pods name only
     * that part's user Secret.
     */
    @Test
    void aRequireTlsFastTierRunsRealMongodsOnTheOperatorsCertificateAndEachPartHasItsOwnUser() {
        String ns = "e2e-tls";
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(ns)
                        .endMetadata()
                        .build())
                .create();
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();
        String archiveCa = CertificateAuthority.newCa("archive-ca", Instant.now(), Duration.ofDays(365))
                .certificatePem();
        client.secrets()
                .inNamespace(ns)
                .resource(Clusters.archiveCaSecret(archiveCa))
                .create();
        ThermoclineCluster cluster = Clusters.cluster(ns, "secure");
        cluster.getSpec().fastTier.members = 3;
        cluster.getSpec().fastTier.spreadMembers =
                "preferred"; // one k3s node: required anti-affinity would leave two Pending
        cluster.getSpec().fastTier.storage.size = "1Gi";
        cluster.getSpec().tls.fastTierMode = "requireTLS";
        cluster.getSpec().tls.tierCaSecretRef = new SecretKeyRef("archive-ca", null);
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .resource(cluster)
                .create();

        await().atMost(Duration.ofMinutes(5)).ignoreExceptions().untilAsserted(() -> {
            assertThat(startedMongods(ns)).isEqualTo(3);
            assertThat(client.pods()
                            .inNamespace(ns)
                            .withLabel("app.kubernetes.io/component", "fast-tier")
                            .list()
                            .getItems())
                    .allSatisfy(p -> assertThat(FastTierStatefulSetDependent.tlsModeOf(p.getSpec()))
                            .isEqualTo(TlsMode.REQUIRE));
        });
        // positive signal first: every member's mongod passed its readiness probe on the TLS port, so a certificate
        // it refused would have ended it by now
        await().atMost(Duration.ofMinutes(3))
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(client.pods()
                                .inNamespace(ns)
                                .withLabel("app.kubernetes.io/component", "fast-tier")
                                .list()
                                .getItems())
                        .hasSize(3)
                        .allSatisfy(p -> assertThat(p.getStatus().getContainerStatuses())
                                .allSatisfy(c -> assertThat(c.getReady()).isTrue())));
        assertThat(client.pods()
                        .inNamespace(ns)
                        .withLabel("app.kubernetes.io/component", "fast-tier")
                        .list()
                        .getItems())
                .as("mongod accepted the operator's certificate and CA: no restart")
                .allSatisfy(p -> assertThat(p.getStatus().getContainerStatuses())
                        .allSatisfy(c -> assertThat(c.getRestartCount()).isZero()));

        for (DataPlanePart part : DataPlanePart.values()) {
            assertThat(client.secrets()
                            .inNamespace(ns)
                            .withName("secure-" + part.role() + "-fast-user")
                            .get())
                    .as(part.role())
                    .isNotNull();
        }
        await().atMost(Duration.ofMinutes(2)).ignoreExceptions().untilAsserted(() -> {
            String proxy = Serialization.asJson(client.apps()
                    .deployments()
                    .inNamespace(ns)
                    .withName("secure-proxy")
                    .get()
                    .getSpec()
                    .getTemplate());
            assertThat(proxy)
                    .contains("secure-proxy-fast-user")
                    .doesNotContain("secure-feeder-fast-user", "secure-evictor-fast-user", "secure-warmer-fast-user");
        });
    }

    private static long startedMongods(String ns) {
        return client
                .pods()
                .inNamespace(ns)
                .withLabel("app.kubernetes.io/component", "fast-tier")
                .list()
                .getItems()
                .stream()
                .filter(p -> p.getStatus() != null && p.getStatus().getContainerStatuses() != null)
                .filter(p -> p.getStatus().getContainerStatuses().stream()
                        .anyMatch(c -> c.getState().getRunning() != null))
                .count();
    }

    private static void edit(String ns, java.util.function.Consumer<ThermoclineCluster> change) {
        UserEdits.edit(client, ns, "e2e", change, Duration.ofSeconds(30));
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            return false;
        }
    }
}
