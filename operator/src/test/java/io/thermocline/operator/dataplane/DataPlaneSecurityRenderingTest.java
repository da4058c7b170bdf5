package io.thermocline.operator.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.SecretRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.fakes.RenderedCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** spec.auth and spec.tls rendered into the data plane's auth/tls sections, and the Secrets each role gets as files. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DataPlaneSecurityRenderingTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");

    @Test
    void defaultsRequireLoginsWithTheArchivesUsersAndNoTls() {
        ThermoclineConfig config = DataPlaneConfig.render(spec(), LAYOUT);
        assertThat(config.auth().mode()).isEqualTo("required");
        assertThat(config.auth().users()).containsExactly("archive");
        assertThat(config.auth().usersFile()).isNull();
        assertThat(config.tls().mode()).isEqualTo("disabled");
        assertThat(config.tls().certificateFile()).isNull();
        assertThat(config.tls().tierCaFile()).isNull();
    }

    @Test
    void authAndTlsAreRenderedWithThePathsTheirSecretsAreMountedAt() {
        ThermoclineConfig config = DataPlaneConfig.render(secured(), LAYOUT);
        assertThat(config.auth().mode()).isEqualTo("required");
        assertThat(config.auth().users()).containsExactly("archive", "file");
        assertThat(config.auth().usersFile()).isEqualTo("/etc/thermocline/auth/app-users.yaml");
        assertThat(config.tls().mode()).isEqualTo("required");
        assertThat(config.tls().certificateFile()).isEqualTo("/etc/thermocline/tls/tls.crt");
        assertThat(config.tls().keyFile()).isEqualTo("/etc/thermocline/tls/tls.key");
        assertThat(config.tls().clientCaFile()).isEqualTo("/etc/thermocline/client-ca/ca.crt");
        assertThat(config.tls().tierCaFile()).isEqualTo("/etc/thermocline/tier-ca/tiers.pem");

        ThermoclineClusterSpec disabled = spec();
        disabled.auth.mode = "disabled";
        assertThat(DataPlaneConfig.render(disabled, LAYOUT).auth().mode()).isEqualTo("disabled");
    }

    @Test
    void onlyTheProxyGetsTheUsersFileAndItsCertificateEveryRoleGetsTheTiersCa() {
        DesiredCluster desired = desired(secured());
        PodSpec proxy = pod(desired, "proxy");
        assertThat(mounts(proxy))
                .containsOnlyKeys(
                        "/etc/thermocline",
                        "/tmp",
                        "/etc/thermocline/auth",
                        "/etc/thermocline/tls",
                        "/etc/thermocline/client-ca",
                        "/etc/thermocline/tier-ca",
                        "/etc/thermocline/peer");
        assertThat(secretVolumes(proxy))
                .containsEntry("users", "app-users")
                .containsEntry("certificate", "proxy-tls")
                .containsEntry("client-ca", "client-cas")
                .containsEntry("tier-ca", "tier-cas")
                .containsEntry("peer", "orders-peer");
        for (String worker : List.of("feeder", "evictor", "warmer")) {
            PodSpec pod = pod(desired, worker);
            assertThat(mounts(pod)).as(worker).containsOnlyKeys("/etc/thermocline", "/tmp", "/etc/thermocline/tier-ca");
            assertThat(secretVolumes(pod)).as(worker).containsOnlyKeys("tier-ca");
        }
    }

    @Test
    void theProxyAloneMountsTheOperatorsPeerKeyAndItsConfigLinksTheReplicasWithIt() {
        ThermoclineConfig config = DataPlaneConfig.render(spec(), LAYOUT);
        assertThat(config.fleet().secretFile()).isEqualTo("/etc/thermocline/peer/secret");
        assertThat(config.fleet().peerService()).isEqualTo("orders-proxy-peers.shop.svc");
        assertThat(config.fleet().hasPeers())
                .as("linked replicas: cursors forwarded, budgets divided by the live count")
                .isTrue();

        DesiredCluster desired = desired(spec());
        PodSpec proxy = pod(desired, "proxy");
        assertThat(mounts(proxy)).containsEntry("/etc/thermocline/peer", "peer");
        assertThat(secretVolumes(proxy)).containsEntry("peer", "orders-peer");
        assertThat(proxy.getVolumes())
                .filteredOn(v -> v.getName().equals("peer"))
                .singleElement()
                .satisfies(v -> assertThat(v.getSecret().getItems()).isNullOrEmpty());
        for (String worker : List.of("feeder", "evictor", "warmer")) {
            PodSpec pod = pod(desired, worker);
            assertThat(mounts(pod)).as(worker).doesNotContainKey("/etc/thermocline/peer");
            assertThat(secretVolumes(pod)).as(worker).doesNotContainValue("orders-peer");
        }
    }

    @Test
    void eachRoleLoadsTheSharedConfigWithOnlyTheFilesItIsGiven() {
        ThermoclineClusterSpec spec = secured();
        String yaml = DataPlaneConfig.toYaml(spec, LAYOUT);
        // the proxy needs all five files; a worker, with its overrides, only the tiers' CA (none exists in this JVM)
        assertThat(unreadable(yaml, env(desired(spec), "proxy")))
                .containsExactlyInAnyOrder(
                        "auth.usersFile", "tls.certificateFile", "tls.keyFile", "tls.clientCaFile", "tls.tierCaFile");
        for (String worker : List.of("feeder", "evictor", "warmer")) {
            assertThat(unreadable(yaml, env(desired(spec), worker))).as(worker).containsExactly("tls.tierCaFile");
        }
    }

    private static List<String> unreadable(String yaml, Map<String, String> env) {
        InvalidConfigException e =
                catchThrowableOfType(InvalidConfigException.class, () -> ConfigLoader.parse(yaml, env));
        assertThat(e).isNotNull();
        assertThat(e.problems()).allMatch(p -> p.contains(" cannot be read;"), "only missing files");
        return e.problems().stream().map(p -> p.substring(0, p.indexOf(':'))).toList();
    }

    private static Map<String, String> env(DesiredCluster desired, String role) {
        Map<String, String> env = new HashMap<>(DataPlaneConfig.podEnvironment(
                "mongodb://u:p@a-0:27017/?replicaSet=rs0", "mongodb://u:p@f-0:27017/?replicaSet=x"));
        for (EnvVar var : pod(desired, role).getContainers().get(0).getEnv()) {
            if (var.getValue() != null
                    && var.getName().startsWith("THERMOCLINE_")
                    && !var.getName().endsWith("_URI")) {
                env.put(var.getName(), var.getValue());
            }
        }
        return env;
    }

    private static PodSpec pod(DesiredCluster desired, String role) {
        Container container = DataPlaneContainer.container(desired, role, null).build();
        return DataPlaneContainer.podSpec(desired, container, null, container.getName())
                .build();
    }

    private static Map<String, String> mounts(PodSpec pod) {
        return pod.getContainers().get(0).getVolumeMounts().stream()
                .collect(Collectors.toMap(VolumeMount::getMountPath, VolumeMount::getName));
    }

    private static Map<String, String> secretVolumes(PodSpec pod) {
        return pod.getVolumes().stream()
                .filter(v -> v.getSecret() != null)
                .collect(Collectors.toMap(Volume::getName, v -> v.getSecret().getSecretName()));
    }

    private static DesiredCluster desired(ThermoclineClusterSpec spec) {
        return RenderedCluster.desired(LAYOUT, spec);
    }

    private static ThermoclineClusterSpec secured() {
        ThermoclineClusterSpec spec = spec();
        spec.auth.users = List.of("archive", "file");
        spec.auth.usersSecretRef = new SecretKeyRef("app-users", "app-users.yaml");
        spec.tls.mode = "required";
        spec.tls.certificateSecretRef = new SecretRef("proxy-tls");
        spec.tls.clientCaSecretRef = new SecretKeyRef("client-cas", null);
        spec.tls.tierCaSecretRef = new SecretKeyRef("tier-cas", "tiers.pem");
        return spec;
    }

    private static ThermoclineClusterSpec spec() {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.archive.uriSecretRef = new SecretKeyRef("archive", null);
        CollectionSpec orders = new CollectionSpec();
        orders.database = "shop";
        orders.collection = "orders";
        orders.hotWindow = "30d";
        spec.collections.add(orders);
        return spec;
    }
}
