package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.credentials.DataPlanePart;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.fakes.FakeModes;
import io.thermocline.operator.fakes.FakeTiering;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.mode.DrainBeforeDeletion;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Each step of a deletion, against the mock API server with the fake mode store and tiering (the reconciler's use of them,
 * with a garbage collector and Terminating pods: InARealClusterTest).
 */
@EnableKubernetesMockClient(crud = true)
@Timeout(60)
class DeletionTest {

    private static final String NS = "ns";
    private static final Duration BOUND = Duration.ofMinutes(30);

    KubernetesClient client;
    private final FakeModes modes = new FakeModes();
    private final FakeTiering tiering = new FakeTiering();
    private ThermoclineCluster cluster;
    private ClusterLayout layout;

    @BeforeEach
    void deleted() {
        cluster = Clusters.cluster(NS, "c");
        cluster.getSpec().fastTier.storage.retentionPolicy = "Delete";
        cluster.getMetadata().setUid("uid-c");
        cluster.getMetadata().setFinalizers(List.of("thermocline.io/drain"));
        cluster.getMetadata().setAnnotations(new HashMap<>());
        layout = ClusterLayout.of(cluster);
        client.resource(Clusters.archiveSecret(NS)).create();
        client.resource(cluster).create();
        for (int ordinal : new int[] {0, 1, 2, 4}) { // 4: a member scaled away earlier still has its volume
            claim(layout.memberClaim(ordinal));
        }
        claim("data-other-fast-0");
        for (String secret : secrets()) {
            client.resource(new SecretBuilder()
                            .withNewMetadata()
                            .withName(secret)
                            .withNamespace(NS)
                            .endMetadata()
                            .addToData(UsersSecretDependent.DATA_PLANE_USERNAME, base64("thermocline"))
                            .addToData(UsersSecretDependent.DATA_PLANE_PASSWORD, base64("pw"))
                            .build())
                    .create();
        }
    }

    @Test
    void aFullDeletionDrainsStopsWritesWaitsForTheFeederThenRemovesEverything() {
        running();
        tiering.report(new TieringSnapshot(40L, false, 10L, 5L));

        assertThat(advance().reason()).isEqualTo(DrainBeforeDeletion.DRAINING);
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(NS)
                        .withName(layout.proxy())
                        .get()
                        .getSpec()
                        .getReplicas())
                .as("applications keep writing through the proxy while the fleet drains")
                .isEqualTo(2);

        Deletion.Step stopping = advanceUntilNot(DrainBeforeDeletion.DRAINING);
        assertThat(stopping.reason()).isEqualTo("DeletionStoppingWrites");
        assertThat(stopping.message()).contains("its 1 pod(s)");
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(NS)
                        .withName(layout.proxy())
                        .get()
                        .getSpec()
                        .getReplicas())
                .isZero();
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(NS)
                        .withName(layout.feeder())
                        .get()
                        .getSpec()
                        .getReplicas())
                .as("the feeder is left alone while writes may still come")
                .isZero();

        client.pods().inNamespace(NS).withName("c-proxy-1").delete();
        assertThat(advance().reason()).isEqualTo("DeletionWaitingForFeeder");
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(NS)
                        .withName(layout.feeder())
                        .get()
                        .getSpec()
                        .getReplicas())
                .as("a paused cluster's feeder runs again to mirror what is left")
                .isEqualTo(1);

        // as the feeder reports them: an open dead letter holds mirrored-through, so the drain is not complete either
        tiering.report(new TieringSnapshot(
                0L,
                false,
                10L,
                10L,
                List.of(),
                new TieringSnapshot.FeederAlerts(2, "shop.orders _id 7 upsert: E11000", null, false)));
        Deletion.Step deadLetters = advance();
        assertThat(deadLetters.reason()).isEqualTo(Deletion.DEAD_LETTERS);
        assertThat(deadLetters.message()).contains("E11000");
        assertThat(stored().getMetadata().getAnnotations()).doesNotContainKey(Deletion.DRAINED_ANNOTATION);
        assertThat(reasons()).contains("DeletionWaitingForFeeder", Deletion.DEAD_LETTERS);

        tiering.report(new TieringSnapshot(0L, true, 10L, 10L));
        Deletion.Step done = advance();
        assertThat(done.done()).isTrue();
        assertThat(stored().getMetadata().getAnnotations()).containsEntry(Deletion.DRAINED_ANNOTATION, "true");
        assertThat(client.apps().statefulSets().inNamespace(NS).list().getItems())
                .isEmpty();
        assertThat(client.apps().deployments().inNamespace(NS).list().getItems())
                .isEmpty();
        assertThat(client.services().inNamespace(NS).list().getItems()).isEmpty();
        assertThat(client.configMaps().inNamespace(NS).withName(layout.config()).get())
                .isNull();
        assertThat(claims()).as("every ordinal's volume, no other cluster's").containsExactly("data-other-fast-0");
        assertThat(client.secrets().inNamespace(NS).list().getItems())
                .extracting(s -> s.getMetadata().getName())
                .containsExactly("archive");
    }

    @Test
    void aFastTierThatCannotBeAddressedRefusesTheDeletion() {
        running();
        client.secrets().inNamespace(NS).withName(layout.usersSecret()).delete();
        Deletion.Step refused = advance();
        assertThat(refused.done()).isFalse();
        assertThat(refused.reason()).isEqualTo(DrainBeforeDeletion.REFUSED);
        assertThat(client.apps()
                        .statefulSets()
                        .inNamespace(NS)
                        .withName(layout.fastTier())
                        .get())
                .isNotNull();
        assertThat(claims()).hasSize(5);
    }

    /** A retry after the drain (a failed finalizer patch, an operator restart) does not drain again. */
    @Test
    void aDeletionDrainedBeforeGoesStraightToRemoving() {
        running();
        tiering.report(new TieringSnapshot(40L, false, 10L, 5L));
        cluster.getMetadata().getAnnotations().put(Deletion.DRAINED_ANNOTATION, "true");
        assertThat(advance().done()).isTrue();
        assertThat(modes.controller(NS, "c").reads())
                .as("the fleet's mode is not read again")
                .isZero();
        assertThat(claims()).containsExactly("data-other-fast-0");
    }

    @Test
    void volumesWithoutTheirStatefulSetWaitForTheUsersChoice() {
        Deletion.Step waiting = advance();
        assertThat(waiting.done()).isFalse();
        assertThat(waiting.reason()).isEqualTo(Deletion.VOLUMES_WITHOUT_FAST_TIER);
        assertThat(waiting.message()).contains(layout.memberClaim(4), "retentionPolicy: Retain");
        assertThat(reasons()).containsExactly(Deletion.VOLUMES_WITHOUT_FAST_TIER);
        assertThat(claims()).hasSize(5);
        assertThat(client.secrets()
                        .inNamespace(NS)
                        .withName(layout.usersSecret())
                        .get())
                .isNotNull();

        cluster.getMetadata().getAnnotations().put(ThermoclineClusterReconciler.SKIP_DRAIN_ANNOTATION, "true");
        assertThat(advance().done()).isTrue();
        assertThat(claims()).containsExactly("data-other-fast-0");
        assertThat(client.secrets()
                        .inNamespace(NS)
                        .withName(layout.usersSecret())
                        .get())
                .isNull();
    }

    @Test
    void retainKeepsTheVolumesAndTheCredentials() {
        cluster.getSpec().fastTier.storage.retentionPolicy = "Retain";
        assertThat(advance().done()).isTrue();
        assertThat(claims()).hasSize(5);
        assertThat(client.secrets().inNamespace(NS).list().getItems())
                .hasSize(secrets().size() + 1);
    }

    private Deletion.Step advance() {
        cluster.getMetadata().setDeletionTimestamp(Instant.now().toString());
        return Deletion.advance(client, cluster, tiering, modes, BOUND);
    }

    private Deletion.Step advanceUntilNot(String reason) {
        for (int i = 0; i < 10; i++) {
            Deletion.Step step = advance();
            if (!reason.equals(step.reason())) {
                return step;
            }
        }
        throw new AssertionError("still " + reason + " after 10 passes");
    }

    private void running() {
        client.resource(new StatefulSetBuilder()
                        .withNewMetadata()
                        .withName(layout.fastTier())
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withReplicas(3)
                        .endSpec()
                        .build())
                .create();
        client.resource(new DeploymentBuilder()
                        .withNewMetadata()
                        .withName(layout.proxy())
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withReplicas(2)
                        .endSpec()
                        .build())
                .create();
        client.resource(new DeploymentBuilder()
                        .withNewMetadata()
                        .withName(layout.feeder())
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withReplicas(0)
                        .endSpec()
                        .build())
                .create();
        client.resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("c-proxy-1")
                        .withNamespace(NS)
                        .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT))
                        .endMetadata()
                        .build())
                .create();
        for (String service : List.of(layout.fastTier(), layout.proxy(), layout.proxyPeers())) {
            client.resource(new ServiceBuilder()
                            .withNewMetadata()
                            .withName(service)
                            .withNamespace(NS)
                            .endMetadata()
                            .build())
                    .create();
        }
        client.resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(layout.config())
                        .withNamespace(NS)
                        .endMetadata()
                        .build())
                .create();
    }

    private ThermoclineCluster stored() {
        return client.resources(ThermoclineCluster.class)
                .inNamespace(NS)
                .withName("c")
                .get();
    }

    private List<String> secrets() {
        List<String> secrets =
                new java.util.ArrayList<>(List.of(layout.keyfileSecret(), layout.usersSecret(), layout.peerSecret()));
        for (DataPlanePart part : DataPlanePart.values()) {
            secrets.add(part.secret(layout));
        }
        return secrets;
    }

    private void claim(String name) {
        client.resource(new PersistentVolumeClaimBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(NS)
                        .endMetadata()
                        .build())
                .create();
    }

    private List<String> claims() {
        return client.persistentVolumeClaims().inNamespace(NS).list().getItems().stream()
                .map(c -> c.getMetadata().getName())
                .sorted()
                .toList();
    }

    private static String base64(String text) {
        return java.util.Base64.getEncoder().encodeToString(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private List<String> reasons() {
        return client.v1().events().inNamespace(NS).list().getItems().stream()
                .map(Event::getReason)
                .toList();
    }
}
