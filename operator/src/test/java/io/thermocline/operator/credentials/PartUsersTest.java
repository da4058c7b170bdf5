package io.thermocline.operator.credentials;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.fakes.RenderedCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One fast-tier user per data-plane part: its own Secret, in its own pods only, with the roles its code needs. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PartUsersTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");

    @Test
    void eachPartsPodsReadOnlyItsOwnPasswordAndNoOtherPartsNorTheOperators() {
        DesiredCluster desired = desired(spec());
        for (DataPlanePart part : DataPlanePart.values()) {
            Set<String> secrets = secretsReferenced(pod(desired, part.role()));
            assertThat(secrets).as(part.role()).contains(part.secret(LAYOUT)).doesNotContain(LAYOUT.usersSecret());
            for (DataPlanePart other : DataPlanePart.values()) {
                if (other != part) {
                    assertThat(secrets)
                            .as(part.role() + " must not see " + other.role() + "'s password")
                            .doesNotContain(other.secret(LAYOUT));
                }
            }
        }
    }

    @Test
    void eachPartLogsInToTheFastTierAsItsOwnUserWithoutAPasswordInTheSpec() {
        DesiredCluster desired = desired(spec());
        Set<String> users = new HashSet<>();
        for (DataPlanePart part : DataPlanePart.values()) {
            Container container = pod(desired, part.role()).getContainers().get(0);
            String uri = env(container, DataPlaneConfig.FAST_URI_ENV).getValue();
            assertThat(uri)
                    .as(part.role())
                    .startsWith("mongodb://" + part.user() + ":$(" + DataPlaneContainer.FAST_PASSWORD_ENV + ")@")
                    .contains(LAYOUT.memberHost(2))
                    .contains("authSource=admin");
            EnvVar password = env(container, DataPlaneContainer.FAST_PASSWORD_ENV);
            assertThat(password.getValue()).isNull();
            assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo(part.secret(LAYOUT));
            assertThat(password.getValueFrom().getSecretKeyRef().getKey()).isEqualTo(DataPlanePart.PASSWORD);
            users.add(part.user());
        }
        assertThat(users).hasSize(4).doesNotContain(ClusterLayout.DATA_PLANE_USER, ClusterLayout.ROOT_USER);
    }

    @Test
    void theWorkersGetNoWriteRightOutsideTheirStateAndTheTieredCollections() {
        List<CollectionSpec> collections = spec().collections;
        FastTierUser feeder = DataPlanePart.FEEDER.fastTierUser(LAYOUT, collections, "x");
        assertThat(feeder.roles()).containsExactlyInAnyOrder("readAnyDatabase@admin", "readWrite@thermocline");
        assertThat(feeder.hasCustomRole()).isFalse();

        FastTierUser evictor = DataPlanePart.EVICTOR.fastTierUser(LAYOUT, collections, "x");
        assertThat(evictor.roles()).containsExactly("readWrite@thermocline");
        assertThat(evictor.actions()).containsExactlyInAnyOrder("find", "insert", "remove");
        assertThat(evictor.namespaces()).containsExactly("app.events", "shop.orders");

        FastTierUser warmer = DataPlanePart.WARMER.fastTierUser(LAYOUT, collections, "x");
        assertThat(warmer.roles()).containsExactly("readWrite@thermocline");
        assertThat(warmer.actions())
                .containsExactlyInAnyOrder("find", "insert", "createCollection")
                .doesNotContain("remove");
        assertThat(warmer.namespaces()).containsExactly("app.events", "shop.orders");

        FastTierUser proxy = DataPlanePart.PROXY.fastTierUser(LAYOUT, collections, "x");
        assertThat(proxy.roles())
                .containsExactlyInAnyOrder(
                        "readWriteAnyDatabase@admin", "clusterMonitor@admin", "readWrite@thermocline");
        assertThat(proxy.toString()).doesNotContain("x]").contains("password=***");
    }

    @Test
    void theOperatorKeepsItsOwnUserAndOnePerPartWaitingForSecretsNotYetMade() {
        Map<String, String> operatorSecret = Map.of(
                UsersSecretDependent.DATA_PLANE_USERNAME,
                "thermocline",
                UsersSecretDependent.DATA_PLANE_PASSWORD,
                "op-pw");
        List<FastTierUser> users = UsersSecretDependent.fastTierUsers(
                LAYOUT,
                spec().collections,
                operatorSecret,
                name -> name.equals(DataPlanePart.FEEDER.secret(LAYOUT))
                        ? new io.fabric8.kubernetes.api.model.SecretBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .addToData(DataPlanePart.PASSWORD, SecretText.encode("feeder-pw"))
                                .build()
                        : null);
        assertThat(users)
                .extracting(FastTierUser::name)
                .containsExactly(
                        "thermocline",
                        "thermocline-proxy",
                        "thermocline-feeder",
                        "thermocline-evictor",
                        "thermocline-warmer");
        assertThat(users).extracting(FastTierUser::password).containsExactly("op-pw", null, "feeder-pw", null, null);
        assertThat(users.get(2).secret()).isEqualTo("orders-feeder-fast-user");
    }

    private static Set<String> secretsReferenced(PodSpec pod) {
        Set<String> names = new HashSet<>();
        for (Volume volume : pod.getVolumes()) {
            if (volume.getSecret() != null) {
                names.add(volume.getSecret().getSecretName());
            }
        }
        for (Container container : pod.getContainers()) {
            for (EnvVar var : container.getEnv()) {
                if (var.getValueFrom() != null && var.getValueFrom().getSecretKeyRef() != null) {
                    names.add(var.getValueFrom().getSecretKeyRef().getName());
                }
            }
        }
        return names;
    }

    private static EnvVar env(Container container, String name) {
        return container.getEnv().stream()
                .filter(e -> e.getName().equals(name))
                .findFirst()
                .orElseThrow();
    }

    private static PodSpec pod(DesiredCluster desired, String role) {
        Container container = DataPlaneContainer.container(desired, role, null).build();
        return DataPlaneContainer.podSpec(desired, container, null, container.getName())
                .build();
    }

    private static DesiredCluster desired(ThermoclineClusterSpec spec) {
        return RenderedCluster.desired(LAYOUT, spec);
    }

    private static ThermoclineClusterSpec spec() {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.archive.uriSecretRef = new SecretKeyRef("archive", null);
        spec.collections.add(new CollectionSpec("shop", "orders", "_id", "30d"));
        spec.collections.add(new CollectionSpec("app", "events", "_id", "7d"));
        return spec;
    }
}
