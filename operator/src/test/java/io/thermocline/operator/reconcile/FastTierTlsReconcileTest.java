package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.fakes.ReplicaSetModel;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.fasttier.tls.CertificateAuthority;
import io.thermocline.operator.fasttier.tls.FastTierCertificates;
import io.thermocline.operator.fasttier.tls.Pem;
import io.thermocline.operator.fasttier.tls.TlsMode;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ConditionType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Fast-tier TLS through the reconciler, on the mock API server with the StatefulSet controller simulated:
 * a new cluster starts with requireTLS and every part on TLS; a running plain-text one is rolled through
 * allowTLS and preferTLS, the members one at a time, without a state in which two members or a client and
 * a member cannot talk.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class FastTierTlsReconcileTest extends OperatorOnFakes {

    private static final Duration WAIT = Duration.ofSeconds(30);

    FastTierTlsReconcileTest() {
        super("tls", WAIT);
    }

    private String archiveCa;
    private final ScheduledExecutorService controllers = Executors.newSingleThreadScheduledExecutor();

    @BeforeEach
    void archiveCa() {
        archiveCa = CertificateAuthority.newCa("archive-ca", Instant.now(), Duration.ofDays(365))
                .certificatePem();
        client.secrets()
                .inNamespace(ns)
                .resource(Clusters.archiveCaSecret(archiveCa))
                .create();
    }

    @AfterEach
    void stop() {
        controllers.shutdownNow();
    }

    @Test
    void aNewClusterStartsWithRequireTlsAndEveryPartOnTlsWithItsCa() {
        ThermoclineCluster c = tls(cluster(ns, "secure"));
        create(c);
        ReplicaSetModel model = replicaSet.model(ns, "secure");
        try (StatefulSetSimulator pods = new StatefulSetSimulator(client, new ClusterLayout("secure", ns), model)) {
            simulateDataPlaneControllers("secure");
            await().atMost(WAIT).until(() -> get(Deployment.class, "secure-proxy"), Objects::nonNull);
            StatefulSet sts = get(StatefulSet.class, "secure-fast");
            assertThat(FastTierStatefulSetDependent.tlsModeOf(
                            sts.getSpec().getTemplate().getSpec()))
                    .isEqualTo(TlsMode.REQUIRE);

            Secret server = get(Secret.class, "secure-fast-tls");
            String bundle = FastTierCertificates.decoded(server).get("ca.crt");
            String tierCa = FastTierCertificates.decoded(get(Secret.class, "secure-tier-ca"))
                    .get("ca.crt");
            assertThat(Pem.certificates(tierCa))
                    .as("the fast tier's CA and the archive's")
                    .hasSize(2);
            assertThat(tierCa).startsWith(bundle).endsWith(archiveCa);
            for (String part : List.of("secure-proxy", "secure-feeder")) {
                Deployment d = get(Deployment.class, part);
                List<EnvVar> env = d.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getEnv();
                assertThat(value(env, DataPlaneConfig.FAST_URI_ENV)).as(part).endsWith("&tls=true");
                assertThat(value(env, DataPlaneContainer.TIER_CA_FILE_ENV))
                        .isEqualTo("/etc/thermocline/tier-ca/ca.crt");
                assertThat(d.getSpec().getTemplate().getSpec().getVolumes())
                        .filteredOn(v -> "tier-ca".equals(v.getName()))
                        .singleElement()
                        .satisfies(
                                v -> assertThat(v.getSecret().getSecretName()).isEqualTo("secure-tier-ca"));
            }
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                var condition = condition("secure", ConditionType.CertificatesReady);
                assertThat(condition.getStatus()).isEqualTo("True");
                assertThat(condition.getMessage())
                        .contains("certificate valid until", "tlsMode requireTLS on 3/3 members", "clients use TLS");
            });
        }
    }

    @Test
    void aRunningPlainTextFastTierIsRolledToRequireTlsWithoutAnUnreachableMember() {
        create(cluster(ns, "roll"));
        ReplicaSetModel model = replicaSet.model(ns, "roll");
        ClusterLayout layout = new ClusterLayout("roll", ns);
        try (StatefulSetSimulator pods = new StatefulSetSimulator(client, layout, model)) {
            simulateDataPlaneControllers("roll");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> "True"
                            .equals(condition("roll", ConditionType.FastTierReady)
                                    .getStatus()));
            assertThat(condition("roll", ConditionType.CertificatesReady))
                    .as("no TLS, nothing to report")
                    .isNull();

            List<TlsMode> templates = new CopyOnWriteArrayList<>();
            List<String> violations = new CopyOnWriteArrayList<>();
            controllers.scheduleWithFixedDelay(
                    () -> observe(layout, templates, violations), 0, 20, TimeUnit.MILLISECONDS);
            edit("roll", x -> tls(x));
            await().atMost(Duration.ofSeconds(60))
                    .ignoreExceptions()
                    .until(() -> podModes(layout).size() == 3
                            && podModes(layout).stream().allMatch(m -> m == TlsMode.REQUIRE));
            assertThat(templates).containsSubsequence(TlsMode.DISABLED, TlsMode.ALLOW, TlsMode.PREFER, TlsMode.REQUIRE);
            assertThat(violations).isEmpty();
            // the proxy went to TLS before requireTLS, and only once every member took TLS
            assertThat(value(
                            get(Deployment.class, "roll-proxy")
                                    .getSpec()
                                    .getTemplate()
                                    .getSpec()
                                    .getContainers()
                                    .get(0)
                                    .getEnv(),
                            DataPlaneConfig.FAST_URI_ENV))
                    .endsWith("&tls=true");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> "True"
                            .equals(condition("roll", ConditionType.CertificatesReady)
                                    .getStatus()));
        }
    }

    /** Every observed state: the members' modes pairwise reachable, and the proxy's template accepted by every member. */
    private void observe(ClusterLayout layout, List<TlsMode> templates, List<String> violations) {
        try {
            StatefulSet sts = get(StatefulSet.class, layout.fastTier());
            if (sts != null) {
                TlsMode mode = FastTierStatefulSetDependent.tlsModeOf(
                        sts.getSpec().getTemplate().getSpec());
                if (templates.isEmpty() || templates.get(templates.size() - 1) != mode) {
                    templates.add(mode);
                }
            }
            List<TlsMode> members = podModes(layout);
            for (TlsMode a : members) {
                for (TlsMode b : members) {
                    if (!a.reaches(b)) {
                        violations.add(a + " cannot reach " + b + " in " + members);
                    }
                }
            }
            Deployment proxy = get(Deployment.class, layout.proxy());
            if (proxy != null) {
                boolean tls = value(
                                proxy.getSpec()
                                        .getTemplate()
                                        .getSpec()
                                        .getContainers()
                                        .get(0)
                                        .getEnv(),
                                DataPlaneContainer.TIER_CA_FILE_ENV)
                        != null;
                for (TlsMode m : members) {
                    if (tls ? !m.acceptsTls() : !m.acceptsPlain()) {
                        violations.add((tls ? "TLS" : "plain") + " proxy refused by " + m + " in " + members);
                    }
                }
            }
        } catch (RuntimeException e) {
            // the next tick looks again
        }
    }

    private List<TlsMode> podModes(ClusterLayout layout) {
        List<TlsMode> modes = new ArrayList<>();
        for (Pod pod : client.pods()
                .inNamespace(ns)
                .withLabels(layout.selector(FastTierStatefulSetDependent.COMPONENT))
                .list()
                .getItems()) {
            modes.add(FastTierStatefulSetDependent.tlsModeOf(pod.getSpec()));
        }
        return modes;
    }

    /** The Deployment and Job controllers: every new template rolled out at once, every warmer run finished. */
    private void simulateDataPlaneControllers(String name) {
        controllers.scheduleWithFixedDelay(
                () -> {
                    try {
                        for (String d : List.of(name + "-proxy", name + "-feeder")) {
                            Deployment deployment = get(Deployment.class, d);
                            if (deployment != null
                                    && (deployment.getStatus() == null
                                            || !Objects.equals(
                                                    deployment.getStatus().getObservedGeneration(),
                                                    deployment.getMetadata().getGeneration()))) {
                                client.apps()
                                        .deployments()
                                        .inNamespace(ns)
                                        .withName(d)
                                        .editStatus(x -> {
                                            int n = x.getSpec().getReplicas();
                                            x.setStatus(new DeploymentStatusBuilder()
                                                    .withReplicas(n)
                                                    .withReadyReplicas(n)
                                                    .withAvailableReplicas(n)
                                                    .withUpdatedReplicas(n)
                                                    .withObservedGeneration(
                                                            x.getMetadata().getGeneration())
                                                    .build());
                                            return x;
                                        });
                            }
                        }
                        for (Job job : client.batch()
                                .v1()
                                .jobs()
                                .inNamespace(ns)
                                .list()
                                .getItems()) {
                            if (job.getStatus() == null || job.getStatus().getSucceeded() == null) {
                                client.batch()
                                        .v1()
                                        .jobs()
                                        .inNamespace(ns)
                                        .withName(job.getMetadata().getName())
                                        .editStatus(j -> {
                                            j.setStatus(new JobStatusBuilder()
                                                    .withSucceeded(1)
                                                    .withStartTime(Instant.now().toString())
                                                    .build());
                                            return j;
                                        });
                            }
                        }
                    } catch (RuntimeException e) {
                        // a conflict with the operator's write: the next tick
                    }
                },
                0,
                100,
                TimeUnit.MILLISECONDS);
    }

    private static ThermoclineCluster tls(ThermoclineCluster c) {
        c.getSpec().tls.fastTierMode = "requireTLS";
        c.getSpec().tls.tierCaSecretRef = new SecretKeyRef("archive-ca", null);
        return c;
    }

    private static String value(List<EnvVar> env, String name) {
        return env.stream()
                .filter(e -> e.getName().equals(name))
                .findFirst()
                .map(EnvVar::getValue)
                .orElse(null);
    }
}
