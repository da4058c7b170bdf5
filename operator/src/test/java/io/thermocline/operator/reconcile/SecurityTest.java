package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.config.ConfigLoader;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.SecretRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.observability.MetricsServiceDependent;
import io.thermocline.operator.status.ConditionType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What issue 15 asks of the operator's objects: every pod admitted under Pod Security
 * {@code restricted} (checked rule by rule, as the admission plugin does), only the proxy, the
 * workers and the operator reach the fast tier, every metrics Service reaches a port its process
 * listens on, and no Secret value in a log line, an Event or the status.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class SecurityTest extends OperatorOnFakes {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Pod Security restricted: the only volume types allowed. */
    private static final Set<String> RESTRICTED_VOLUMES = Set.of(
            "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret");

    SecurityTest() {
        super("s", WAIT);
    }

    private final ConcurrentLinkedQueue<String> logLines = new ConcurrentLinkedQueue<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            String message = record instanceof org.jboss.logmanager.ExtLogRecord ext
                    ? ext.getFormattedMessage()
                    : record.getMessage();
            logLines.add(message + (record.getThrown() == null ? "" : " " + record.getThrown()));
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @BeforeEach
    void captureLogs() {
        java.util.logging.Logger.getLogger("").addHandler(capture);
    }

    @AfterEach
    void stopCapture() {
        java.util.logging.Logger.getLogger("").removeHandler(capture);
    }

    @Test
    void everyRenderedPodIsAdmittedUnderPodSecurityRestricted() throws IOException {
        Map<String, PodTemplateSpec> templates = renderAll("psa");
        assertThat(templates)
                .containsOnlyKeys(
                        "StatefulSet/psa-fast",
                        "Deployment/psa-proxy",
                        "Deployment/psa-feeder",
                        "CronJob/psa-evictor",
                        "Job/" + warmer().getMetadata().getName(),
                        "Deployment/thermocline-operator");
        templates.forEach(SecurityTest::assertRestricted);
        // mongod's data volume: owned by the group mongod runs as
        PodSecurityContext mongod =
                templates.get("StatefulSet/psa-fast").getSpec().getSecurityContext();
        assertThat(mongod.getFsGroup()).isEqualTo(999L);
        assertThat(mongod.getRunAsUser()).isEqualTo(999L);
    }

    @Test
    void onlyTheProxyTheWorkersTheMembersAndTheOperatorReachTheFastTier() throws IOException {
        Map<String, PodTemplateSpec> templates = renderAll("net");
        NetworkPolicy policy = get(NetworkPolicy.class, "net-fast");
        assertThat(policy).isNotNull();
        assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
        assertThat(selects(policy.getSpec().getPodSelector().getMatchLabels(), templates.get("StatefulSet/net-fast")))
                .isTrue();
        assertThat(policy.getSpec().getIngress()).singleElement().satisfies(rule -> {
            assertThat(rule.getPorts())
                    .singleElement()
                    .satisfies(p -> assertThat(p.getPort().getIntVal()).isEqualTo(27017));
            List<NetworkPolicyPeer> peers = rule.getFrom();
            for (String allowed : List.of(
                    "StatefulSet/net-fast",
                    "Deployment/net-proxy",
                    "Deployment/net-feeder",
                    "CronJob/net-evictor",
                    "Job/" + warmer().getMetadata().getName())) {
                assertThat(peers).as(allowed).anySatisfy(peer -> {
                    assertThat(peer.getNamespaceSelector()).as("same namespace").isNull();
                    assertThat(selects(peer.getPodSelector().getMatchLabels(), templates.get(allowed)))
                            .isTrue();
                });
            }
            assertThat(peers).as("the operator, from its own namespace").anySatisfy(peer -> {
                assertThat(peer.getNamespaceSelector()).isNotNull();
                assertThat(selects(
                                peer.getPodSelector().getMatchLabels(),
                                templates.get("Deployment/thermocline-operator")))
                        .isTrue();
            });
            // an application pod of the same namespace, or another cluster's proxy, matches no peer
            PodTemplateSpec app = new io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder()
                    .withNewMetadata()
                    .addToLabels("app", "shop")
                    .addToLabels("app.kubernetes.io/instance", "other")
                    .addToLabels("app.kubernetes.io/component", "proxy")
                    .endMetadata()
                    .build();
            assertThat(peers)
                    .noneSatisfy(peer -> assertThat(peer.getNamespaceSelector() == null
                                    && selects(peer.getPodSelector().getMatchLabels(), app))
                            .isTrue());
            // the five parts, the backup-point and restore Jobs (BackupAndRestoreTest), the operator
            assertThat(peers).hasSize(8);
        });
    }

    @Test
    void everyMetricsServiceReachesAPortItsProcessListensOn() throws IOException {
        Map<String, PodTemplateSpec> templates = renderAll("scrape");
        List<Service> metrics = await().atMost(WAIT)
                .until(
                        () -> client.services()
                                .inNamespace(ns)
                                .withLabel(MetricsServiceDependent.SCRAPE_LABEL, "true")
                                .list()
                                .getItems(),
                        l -> l.size() == 4);
        assertThat(metrics)
                .extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrder(
                        "scrape-proxy-metrics",
                        "scrape-feeder-metrics",
                        "scrape-evictor-metrics",
                        "scrape-warmer-metrics");
        var config = ConfigLoader.parse(
                get(io.fabric8.kubernetes.api.model.ConfigMap.class, "scrape-config")
                        .getData()
                        .get("thermocline.yaml"),
                DataPlaneConfig.podEnvironment(Clusters.ARCHIVE_URI, "mongodb://f:1/?replicaSet=f"));
        for (Service service : metrics) {
            ServicePort port = service.getSpec().getPorts().get(0);
            List<PodTemplateSpec> selected = templates.values().stream()
                    .filter(t -> selects(service.getSpec().getSelector(), t))
                    .toList();
            assertThat(selected).as(service.getMetadata().getName()).hasSize(1);
            Container container = selected.get(0).getSpec().getContainers().get(0);
            ContainerPort target = container.getPorts().stream()
                    .filter(p -> p.getName().equals(port.getTargetPort().getStrVal()))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(service.getMetadata().getName() + " targets port "
                            + port.getTargetPort() + ", which " + container.getName() + " does not name"));
            String role = container.getArgs().get(0);
            int listens = role.equals("proxy") ? config.proxy().httpPort() : metricsFlagPort(container.getArgs());
            assertThat(target.getContainerPort())
                    .as(
                            "%s: the port %s serves /metrics on",
                            service.getMetadata().getName(), role)
                    .isEqualTo(listens);
        }
    }

    @Test
    void noSecretValueReachesALogLineAnEventOrTheStatus() throws IOException {
        ThermoclineCluster c = cluster(ns, "leak");
        c.getSpec().fastTier.members = 1;
        c.getSpec().auth.users = List.of("archive", "file");
        c.getSpec().auth.usersSecretRef = new SecretKeyRef("leak-app-users", null);
        c.getSpec().tls.mode = "required";
        c.getSpec().tls.certificateSecretRef = new SecretRef("leak-proxy-tls");
        create(c);
        // the Secrets spec.auth and spec.tls name are missing: the condition names them, never a value
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(condition("leak", ConditionType.Ready).getMessage())
                                .contains("Secret " + ns + "/leak-proxy-tls", "Secret " + ns + "/leak-app-users"));
        client.secrets()
                .inNamespace(ns)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName("leak-app-users")
                        .endMetadata()
                        .addToData("users.yaml", base64("users: [{user: app, db: admin, pwd: users-file-pwd-4711}]"))
                        .build())
                .create();
        client.secrets()
                .inNamespace(ns)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName("leak-proxy-tls")
                        .endMetadata()
                        .withType("kubernetes.io/tls")
                        .addToData("tls.crt", base64("-----BEGIN CERTIFICATE-----leak-cert"))
                        .addToData("tls.key", base64("-----BEGIN PRIVATE KEY-----leak-tls-key-4711"))
                        .build())
                .create();
        // the workflow applies the proxy and the feeder side by side: either may come first
        await().atMost(WAIT)
                .until(() ->
                        get(Deployment.class, "leak-feeder") != null && get(Deployment.class, "leak-proxy") != null);
        Clusters.markReady(client, ns, "leak", 1);
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() ->
                        "True".equals(condition("leak", ConditionType.Ready).getStatus()));
        // a failing probe, a rotation and a deletion: the paths that report errors
        archive.failWith(new IllegalStateException("probe failed"));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "ReconcileError"
                        .equals(condition("leak", ConditionType.Ready).getReason()));
        archive.reset();
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("leak")
                .delete();
        await().atMost(WAIT).until(() -> stored("leak") == null);

        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("archive password", "s3cret");
        UsersSecretDependent.decoded(get(io.fabric8.kubernetes.api.model.Secret.class, "leak-users"))
                .forEach((k, v) -> {
                    if (k.endsWith("password")) {
                        secrets.put(k, v);
                    }
                });
        secrets.put(
                "keyfile",
                UsersSecretDependent.decoded(get(io.fabric8.kubernetes.api.model.Secret.class, "leak-keyfile"))
                        .get("keyfile"));
        secrets.put("users file password", "users-file-pwd-4711");
        secrets.put("proxy TLS key", "leak-tls-key-4711");
        assertThat(secrets).hasSize(6).allSatisfy((k, v) -> assertThat(v).hasSizeGreaterThan(5));

        List<String> events = client.v1().events().inNamespace(ns).list().getItems().stream()
                .map(e -> e.getReason() + " " + e.getMessage())
                .toList();
        assertThat(events).isNotEmpty();
        List<String> seen = new ArrayList<>(logLines);
        assertThat(seen).as("log lines captured").anyMatch(l -> l.contains("leak"));
        String status = Serialization.asJson(lastStatus);
        secrets.forEach((what, value) -> {
            assertThat(events).as("Events hold the %s", what).noneMatch(e -> e.contains(value));
            assertThat(seen).as("log lines hold the %s", what).noneMatch(l -> l.contains(value));
            assertThat(status).as("status holds the %s", what).doesNotContain(value);
        });
    }

    private static String base64(String value) {
        return java.util.Base64.getEncoder().encodeToString(value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private Object lastStatus;

    @Override
    protected ThermoclineCluster stored(String name) {
        ThermoclineCluster c = client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName(name)
                .get();
        if (c != null && c.getStatus() != null) {
            lastStatus = c.getStatus();
        }
        return c;
    }

    /** Pod Security Standards, restricted profile (v1.30), one rule at a time; plus a read-only root. */
    static void assertRestricted(String owner, PodTemplateSpec template) {
        PodSpec pod = template.getSpec();
        Optional<PodSecurityContext> podContext = Optional.ofNullable(pod.getSecurityContext());
        assertThat(pod.getHostNetwork()).as("%s hostNetwork", owner).isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getHostPID()).as("%s hostPID", owner).isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getHostIPC()).as("%s hostIPC", owner).isNotEqualTo(Boolean.TRUE);
        for (Volume volume : Optional.ofNullable(pod.getVolumes()).orElse(List.of())) {
            Map<String, Object> fields = Serialization.jsonMapper().convertValue(volume, Map.class);
            fields.remove("name");
            assertThat(RESTRICTED_VOLUMES)
                    .as("%s volume %s of type %s", owner, volume.getName(), fields.keySet())
                    .containsAll(fields.keySet());
        }
        assertThat(podContext.map(PodSecurityContext::getSysctls).orElse(List.of()))
                .as("%s sysctls", owner)
                .isNullOrEmpty();
        assertThat(Objects.equals(
                        podContext.map(PodSecurityContext::getRunAsUser).orElse(null), 0L))
                .as("%s runAsUser 0", owner)
                .isFalse();
        List<Container> containers = new ArrayList<>(pod.getContainers());
        containers.addAll(Optional.ofNullable(pod.getInitContainers()).orElse(List.of()));
        for (Container container : containers) {
            String who = owner + " container " + container.getName();
            SecurityContext sc = container.getSecurityContext();
            assertThat(sc).as(who + " securityContext").isNotNull();
            assertThat(sc.getPrivileged()).as(who + " privileged").isNotEqualTo(Boolean.TRUE);
            assertThat(sc.getAllowPrivilegeEscalation())
                    .as(who + " allowPrivilegeEscalation")
                    .isFalse();
            assertThat(sc.getCapabilities().getDrop())
                    .as(who + " capabilities.drop")
                    .contains("ALL");
            assertThat(Optional.ofNullable(sc.getCapabilities().getAdd()).orElse(List.of()))
                    .as(who + " capabilities.add")
                    .isSubsetOf("NET_BIND_SERVICE");
            boolean nonRoot = sc.getRunAsNonRoot() != null
                    ? sc.getRunAsNonRoot()
                    : podContext.map(PodSecurityContext::getRunAsNonRoot).orElse(false);
            assertThat(nonRoot).as(who + " runAsNonRoot (container or pod)").isTrue();
            assertThat(Objects.equals(sc.getRunAsUser(), 0L))
                    .as(who + " runAsUser 0")
                    .isFalse();
            String seccomp = sc.getSeccompProfile() != null
                    ? sc.getSeccompProfile().getType()
                    : podContext
                            .map(p -> p.getSeccompProfile() == null
                                    ? null
                                    : p.getSeccompProfile().getType())
                            .orElse(null);
            assertThat(seccomp).as(who + " seccompProfile (container or pod)").isIn("RuntimeDefault", "Localhost");
            assertThat(sc.getProcMount()).as(who + " procMount").isIn(null, "Default");
            assertThat(Optional.ofNullable(container.getPorts()).orElse(List.of()))
                    .as(who + " hostPort")
                    .allSatisfy(p -> assertThat(p.getHostPort()).isIn(null, 0));
            assertThat(sc.getReadOnlyRootFilesystem())
                    .as(who + " readOnlyRootFilesystem")
                    .isTrue();
            if (!container.getName().equals("keyfile")) { // the init container only copies one file into an emptyDir
                assertThat(container.getVolumeMounts())
                        .as(who + ": a writable /tmp")
                        .anySatisfy(m -> {
                            assertThat(m.getMountPath()).isEqualTo("/tmp");
                            assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE);
                        });
            }
        }
    }

    /** Renders one cluster with everything on, and returns every pod template (and the operator's own, from the install). */
    private Map<String, PodTemplateSpec> renderAll(String name) throws IOException {
        ThermoclineCluster c = cluster(ns, name);
        c.getSpec().archive.tls = new io.thermocline.operator.api.v1alpha1.ArchiveSpec.TlsSpec();
        c.getSpec().archive.tls.caSecretRef = new io.thermocline.operator.api.v1alpha1.SecretKeyRef("archive-ca", null);
        client.secrets()
                .inNamespace(ns)
                .resource(Clusters.archiveCaSecret("-----BEGIN CERTIFICATE-----"))
                .create();
        create(c);
        await().atMost(WAIT)
                .until(() -> get(StatefulSet.class, name + "-fast") != null
                        && get(Deployment.class, name + "-proxy") != null
                        && get(Deployment.class, name + "-feeder") != null
                        && get(CronJob.class, name + "-evictor") != null
                        && warmer() != null
                        && get(NetworkPolicy.class, name + "-fast") != null);
        Map<String, PodTemplateSpec> templates = new LinkedHashMap<>();
        templates.put(
                "StatefulSet/" + name + "-fast",
                get(StatefulSet.class, name + "-fast").getSpec().getTemplate());
        for (String d : List.of(name + "-proxy", name + "-feeder")) {
            templates.put("Deployment/" + d, get(Deployment.class, d).getSpec().getTemplate());
        }
        templates.put(
                "CronJob/" + name + "-evictor",
                get(CronJob.class, name + "-evictor")
                        .getSpec()
                        .getJobTemplate()
                        .getSpec()
                        .getTemplate());
        templates.put(
                "Job/" + warmer().getMetadata().getName(), warmer().getSpec().getTemplate());
        for (HasMetadata o : client.load(Files.newInputStream(Path.of("..", "examples", "install", "operator.yaml")))
                .items()) {
            if (o instanceof Deployment d) {
                templates.put(
                        "Deployment/" + d.getMetadata().getName(), d.getSpec().getTemplate());
            }
        }
        return templates;
    }

    private static boolean selects(Map<String, String> selector, PodTemplateSpec template) {
        Map<String, String> labels = template.getMetadata().getLabels();
        return selector != null
                && !selector.isEmpty()
                && labels != null
                && labels.entrySet().containsAll(selector.entrySet());
    }

    private static int metricsFlagPort(List<String> args) {
        int at = args.indexOf("--metrics");
        assertThat(at).as("%s serves /metrics only with --metrics", args).isNotNegative();
        Matcher m = Pattern.compile(":(\\d+)$").matcher(args.get(at + 1));
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1));
    }

    private Job warmer() {
        return client.batch().v1().jobs().inNamespace(ns).list().getItems().stream()
                .findFirst()
                .orElse(null);
    }
}
