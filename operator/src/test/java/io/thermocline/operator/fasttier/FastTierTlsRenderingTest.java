package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.fakes.RenderedCluster;
import io.thermocline.operator.fasttier.tls.FastTierCertificates;
import io.thermocline.operator.fasttier.tls.FastTierTls;
import io.thermocline.operator.fasttier.tls.TlsMode;
import io.thermocline.operator.fasttier.tls.TlsRollout;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.DesiredCluster;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fast tier's TLS as rendered: mongod's flags and files, its probes, and every data-plane part's connection. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FastTierTlsRenderingTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");

    @Test
    void requireTlsStartsMongodWithTheCertificateTheCaAndNoClientCertificatesRequired() {
        StatefulSet sts = statefulSet(tls(TlsMode.REQUIRE, true));
        String command = mongod(sts).getCommand().get(2);
        assertThat(command)
                .contains("--tlsMode requireTLS --tlsCertificateKeyFile /tls/server.pem --tlsCAFile /tls/ca.crt"
                        + " --tlsAllowConnectionsWithoutCertificates")
                .contains("--keyFile /keyfile/keyfile");
        PodSpec pod = sts.getSpec().getTemplate().getSpec();
        assertThat(pod.getInitContainers().get(0).getCommand().get(2))
                .contains(
                        "cat /tls-secret/tls.crt /tls-secret/tls.key > /tls/server.pem",
                        "cp /tls-secret/ca.crt /tls/ca.crt");
        assertThat(pod.getVolumes())
                .filteredOn(v -> v.getSecret() != null)
                .extracting(v -> v.getSecret().getSecretName())
                .contains("orders-fast-tls", "orders-keyfile");
        assertThat(pod.getVolumes())
                .filteredOn(v -> "tls".equals(v.getName()))
                .singleElement()
                .satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
        // with requireTLS the shell must speak TLS too, to a name the certificate carries
        assertThat(mongod(sts).getReadinessProbe().getExec().getCommand().get(2))
                .contains("--tls --tlsCAFile /tls/ca.crt --host localhost");
        assertThat(mongod(sts)
                        .getLifecycle()
                        .getPreStop()
                        .getExec()
                        .getCommand()
                        .get(2))
                .contains("--tls --tlsCAFile /tls/ca.crt");
        assertThat(sts.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsEntry(FastTierStatefulSetDependent.TLS_HASH, "h1")
                .containsKey(FastTierStatefulSetDependent.TEMPLATE_HASH);
        assertThat(FastTierStatefulSetDependent.tlsModeOf(pod)).isEqualTo(TlsMode.REQUIRE);
    }

    @Test
    void theIntermediateModesKeepPlainTextProbesAndARenewedCertificateChangesTheTemplate() {
        StatefulSet allow = statefulSet(tls(TlsMode.ALLOW, false));
        assertThat(mongod(allow).getCommand().get(2)).contains("--tlsMode allowTLS");
        assertThat(mongod(allow).getReadinessProbe().getExec().getCommand().get(2))
                .doesNotContain("--tls ");
        assertThat(FastTierStatefulSetDependent.tlsModeOf(
                        allow.getSpec().getTemplate().getSpec()))
                .isEqualTo(TlsMode.ALLOW);
        String hash = allow.getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .get(FastTierStatefulSetDependent.TEMPLATE_HASH);
        FastTierTls renewed = new FastTierTls(
                new TlsRollout(TlsMode.ALLOW, false),
                new FastTierCertificates.Material("ca", "h2", null, Instant.now()),
                "");
        assertThat(statefulSet(renewed)
                        .getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getAnnotations()
                        .get(FastTierStatefulSetDependent.TEMPLATE_HASH))
                .as("members restart onto a renewed certificate")
                .isNotEqualTo(hash);
    }

    @Test
    void withoutTlsTheMembersTemplateHasNoTraceOfIt() {
        StatefulSet plain = statefulSet(FastTierTls.OFF);
        String json = Serialization.asJson(plain.getSpec().getTemplate());
        assertThat(json).doesNotContain("tls").doesNotContain(FastTierStatefulSetDependent.TLS_HASH);
        assertThat(plain.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsOnlyKeys(FastTierStatefulSetDependent.TEMPLATE_HASH);
        assertThat(FastTierStatefulSetDependent.tlsModeOf(
                        plain.getSpec().getTemplate().getSpec()))
                .isEqualTo(TlsMode.DISABLED);
    }

    @Test
    void everyDataPlanePartConnectsWithTlsTrustingTheOperatorsBundleOnceTheMembersTakeIt() {
        DesiredCluster desired = desired(tls(TlsMode.PREFER, true));
        for (String role : List.of("proxy", "feeder", "evictor", "warmer")) {
            Container container =
                    DataPlaneContainer.container(desired, role, null).build();
            PodSpec pod = DataPlaneContainer.podSpec(desired, container, null, container.getName())
                    .build();
            assertThat(env(container, DataPlaneConfig.FAST_URI_ENV)).as(role).endsWith("&tls=true");
            assertThat(env(container, DataPlaneContainer.TIER_CA_FILE_ENV))
                    .isEqualTo("/etc/thermocline/tier-ca/ca.crt");
            assertThat(pod.getVolumes())
                    .filteredOn(v -> "tier-ca".equals(v.getName()))
                    .extracting(Volume::getSecret)
                    .singleElement()
                    .satisfies(s -> assertThat(s.getSecretName()).isEqualTo("orders-tier-ca"));
            Map<String, String> podEnv = new HashMap<>(DataPlaneConfig.podEnvironment(
                    "mongodb://a:27017/?replicaSet=rs0", "mongodb://f:27017/?replicaSet=x"));
            container.getEnv().stream()
                    .filter(e -> e.getValue() != null && e.getName().startsWith("THERMOCLINE_TLS"))
                    .forEach(e -> podEnv.put(e.getName(), e.getValue()));
            // the config loader checks the file is there: this JVM has none, so it names the path the pod reads
            InvalidConfigException e = catchThrowableOfType(
                    InvalidConfigException.class, () -> ConfigLoader.parse(desired.configYaml(), podEnv));
            assertThat(e.problems())
                    .as(role)
                    .anyMatch(p -> p.startsWith("tls.tierCaFile") && p.contains("/etc/thermocline/tier-ca/ca.crt"));
        }
        // while a member still takes no TLS, no part uses it
        DesiredCluster rolling = desired(tls(TlsMode.ALLOW, false));
        Container proxy = DataPlaneContainer.container(rolling, "proxy", null).build();
        assertThat(env(proxy, DataPlaneConfig.FAST_URI_ENV)).doesNotContain("tls=true");
        assertThat(proxy.getEnv()).extracting(EnvVar::getName).doesNotContain(DataPlaneContainer.TIER_CA_FILE_ENV);
    }

    @Test
    void theProxyPresentsTheCertificateTheOperatorIssuesWhenTheSpecNamesNone() {
        DesiredCluster desired = desired(tls(TlsMode.REQUIRE, true), "required");
        Container proxy = DataPlaneContainer.container(desired, "proxy", null).build();
        PodSpec pod = DataPlaneContainer.podSpec(desired, proxy, null, "proxy").build();
        assertThat(pod.getVolumes())
                .filteredOn(v -> "certificate".equals(v.getName()))
                .singleElement()
                .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("orders-proxy-tls"));
        assertThat(DataPlaneConfig.render(desired.spec(), LAYOUT).tls().certificateFile())
                .isEqualTo("/etc/thermocline/tls/tls.crt");
        Container feeder = DataPlaneContainer.container(desired, "feeder", null).build();
        assertThat(DataPlaneContainer.podSpec(desired, feeder, null, "feeder")
                        .build()
                        .getVolumes())
                .extracting(Volume::getName)
                .doesNotContain("certificate");
    }

    private static FastTierTls tls(TlsMode mode, boolean clients) {
        return new FastTierTls(
                new TlsRollout(mode, clients),
                new FastTierCertificates.Material("ca", "h1", null, Instant.now()),
                "b1");
    }

    private static String env(Container container, String name) {
        return container.getEnv().stream()
                .filter(e -> e.getName().equals(name))
                .findFirst()
                .map(EnvVar::getValue)
                .orElse(null);
    }

    private static Container mongod(StatefulSet sts) {
        return sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "mongod".equals(c.getName()))
                .findFirst()
                .orElseThrow();
    }

    private static StatefulSet statefulSet(FastTierTls tls) {
        return new FastTierStatefulSetDependent().desired(desired(tls), null);
    }

    private static DesiredCluster desired(FastTierTls tls) {
        return desired(tls, "disabled");
    }

    private static DesiredCluster desired(FastTierTls tls, String clientTls) {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.tls.mode = clientTls;
        spec.archive.uriSecretRef = new SecretKeyRef("archive", null);
        spec.collections.add(new CollectionSpec("shop", "orders", "_id", "30d"));
        spec.tls.fastTierMode = "requireTLS";
        spec.tls.tierCaSecretRef = new SecretKeyRef("archive-ca", null);
        return RenderedCluster.desired(LAYOUT, spec, tls);
    }
}
