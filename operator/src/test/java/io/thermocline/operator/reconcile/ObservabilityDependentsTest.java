package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder;
import io.fabric8.openshift.api.model.monitoring.v1.Endpoint;
import io.fabric8.openshift.api.model.monitoring.v1.RelabelConfig;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.kit.UserEdits;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The metrics Services, the optional ServiceMonitor and the operator's own gauges. */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@Timeout(120)
class ObservabilityDependentsTest extends OperatorOnFakes {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Metric-name prefixes the operator exports (the data plane's are checked in the app module). */
    private static final Pattern OPERATOR_METRIC =
            Pattern.compile("\\b((?:thermocline_cluster|reconciliations)_[a-z0-9_]+)");

    ObservabilityDependentsTest() {
        super("o", WAIT);
    }

    @TestHTTPResource("/q/metrics")
    URL metrics;

    @AfterEach
    void uninstallPrometheusOperator() {
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName("servicemonitors.monitoring.coreos.com")
                .delete();
    }

    @Test
    void metricsServicesReachEachComponentsHttpPortWhichTheFeederServes() {
        create("orders");
        Service proxyMetrics =
                await().atMost(WAIT).until(() -> get(Service.class, "orders-proxy-metrics"), Objects::nonNull);
        Service feederMetrics =
                await().atMost(WAIT).until(() -> get(Service.class, "orders-feeder-metrics"), Objects::nonNull);
        // the Deployments wait for the config and users Secret in the workflow; the Services do not
        Deployment proxy = await().atMost(WAIT).until(() -> get(Deployment.class, "orders-proxy"), Objects::nonNull);
        Deployment feeder = await().atMost(WAIT).until(() -> get(Deployment.class, "orders-feeder"), Objects::nonNull);
        String uid = stored("orders").getMetadata().getUid();
        for (var pair : List.of(Map.entry(proxyMetrics, proxy), Map.entry(feederMetrics, feeder))) {
            Service service = pair.getKey();
            Deployment deployment = pair.getValue();
            assertThat(service.getSpec().getClusterIP())
                    .as("headless: every pod is a target")
                    .isEqualTo("None");
            assertThat(service.getSpec().getSelector())
                    .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
            assertThat(service.getMetadata().getLabels())
                    .containsEntry("thermocline.io/metrics", "true")
                    .containsEntry("app.kubernetes.io/instance", "orders");
            assertThat(service.getMetadata().getAnnotations()).containsEntry("prometheus.io/port", "9090");
            assertThat(service.getMetadata().getOwnerReferences())
                    .anySatisfy(ref -> assertThat(ref.getUid()).isEqualTo(uid));
            ServicePort port = service.getSpec().getPorts().get(0);
            assertThat(port.getName()).isEqualTo("metrics");
            Container container =
                    deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
            assertThat(container.getPorts())
                    .as("the Service's named target port exists on the pod")
                    .anySatisfy(p -> {
                        assertThat(p.getName()).isEqualTo(port.getTargetPort().getStrVal());
                        assertThat(p.getContainerPort()).isEqualTo(9090);
                    });
        }
        // the feeder serves /metrics only when asked to, on the port its Service targets
        assertThat(feeder.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getArgs())
                .containsSubsequence("feeder", "--config")
                .containsSubsequence("--metrics", "0.0.0.0:9090");
        assertThat(client.resources(ServiceMonitor.class).inNamespace(ns).list().getItems())
                .as("no ServiceMonitor while the API server does not serve the kind")
                .isEmpty();
    }

    @Test
    void serviceMonitorAppearsOnceTheApiServesItAndSelectsTheMetricsServices() {
        create("early");
        await().atMost(WAIT).until(() -> get(Service.class, "early-feeder-metrics"), Objects::nonNull);
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .resource(serviceMonitorCrd())
                .create();
        await().atMost(WAIT).until(() -> client.supports("monitoring.coreos.com/v1", "ServiceMonitor"));

        // the next reconcile (a spec edit here; the periodic one in a cluster) adds it without a restart
        UserEdits.edit(client, ns, "early", c -> c.getSpec().proxy.replicas = 3, WAIT);
        ServiceMonitor monitor = await().atMost(WAIT)
                .until(
                        () -> client.resources(ServiceMonitor.class)
                                .inNamespace(ns)
                                .withName("early-metrics")
                                .get(),
                        Objects::nonNull);
        List<Service> selected = client.services()
                .inNamespace(ns)
                .withLabels(monitor.getSpec().getSelector().getMatchLabels())
                .list()
                .getItems();
        assertThat(selected)
                .extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrder(
                        "early-proxy-metrics", "early-feeder-metrics", "early-evictor-metrics", "early-warmer-metrics");
        Endpoint endpoint = monitor.getSpec().getEndpoints().get(0);
        assertThat(endpoint.getPort()).isEqualTo("metrics");
        assertThat(endpoint.getPath()).isEqualTo("/metrics");
        assertThat(endpoint.getRelabelings())
                .extracting(RelabelConfig::getTargetLabel)
                .contains("thermocline_cluster");
        assertThat(monitor.getSpec().getNamespaceSelector().getMatchNames()).containsExactly(ns);
        assertThat(selected)
                .allSatisfy(s -> assertThat(s.getSpec().getPorts())
                        .extracting(ServicePort::getName)
                        .contains("metrics"));
        assertThat(monitor.getMetadata().getOwnerReferences())
                .anySatisfy(ref -> assertThat(ref.getKind()).isEqualTo("ThermoclineCluster"));
        // what kube-prometheus-stack's Prometheus selects ServiceMonitors by (the operator's monitoring-labels
        // setting),
        // beside the label the operator's own informer selects by
        assertThat(monitor.getMetadata().getLabels())
                .containsEntry("release", "kube-prometheus-stack")
                .containsEntry("app.kubernetes.io/managed-by", "thermocline-operator");
    }

    @Test
    void operatorExportsTierSizesReadinessAndEveryOperatorMetricTheExamplesUse() throws Exception {
        archive.failWith(new IllegalStateException("probe exploded"));
        create("boom");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(scrape())
                        .contains("thermocline_cluster_ready{thermocline_cluster=\"boom\",thermocline_namespace=\"" + ns
                                + "\"} 0.0")
                        .contains("reconciliations_failure_total{"));
        archive.reset();
        create("sized");
        await().atMost(WAIT).until(() -> get(Deployment.class, "sized-feeder"), Objects::nonNull);
        setReady("sized");
        String labels = "thermocline_cluster=\"sized\",thermocline_namespace=\"" + ns + "\"";
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(scrape())
                        .contains("thermocline_cluster_documents{" + labels + ",tier=\"archive\"} 50000.0")
                        .contains("thermocline_cluster_documents{" + labels + ",tier=\"fast\"} 1000.0")
                        .contains("thermocline_cluster_feeder_lag_seconds{" + labels + "} 2.0")
                        .contains("thermocline_cluster_ready{" + labels + "} 1.0")
                        // the fleet's mode (tiered: an empty archive), one series per phase
                        .contains("thermocline_cluster_mode_phase{phase=\"Tiered\"," + labels + "} 1.0")
                        .contains("thermocline_cluster_mode_phase{phase=\"Shadowing\"," + labels + "} 0.0"));

        Set<String> exported = exportedNames(scrape());
        Set<String> used = new TreeSet<>();
        try (Stream<Path> files = Files.walk(Path.of("..", "examples", "monitoring"))) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                Matcher m = OPERATOR_METRIC.matcher(Files.readString(file));
                while (m.find()) {
                    used.add(m.group(1));
                }
            }
        }
        assertThat(used).as("the examples use operator metrics").isNotEmpty();
        assertThat(exported).as("operator metrics named in examples/monitoring").containsAll(used);

        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("sized")
                .delete();
        await().atMost(WAIT).untilAsserted(() -> assertThat(scrape()).doesNotContain(labels));
    }

    /** Every series name on the page: "# TYPE" names and sample names (with _total, _bucket ...). */
    static Set<String> exportedNames(String exposition) {
        Set<String> names = new TreeSet<>();
        for (String line : exposition.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                names.add(line.split(" ")[2]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.split("[{ ]")[0]);
            }
        }
        return names;
    }

    private String scrape() throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(metrics.toString()))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    static CustomResourceDefinition serviceMonitorCrd() {
        return new CustomResourceDefinitionBuilder()
                .withNewMetadata()
                .withName("servicemonitors.monitoring.coreos.com")
                .endMetadata()
                .withNewSpec()
                .withGroup("monitoring.coreos.com")
                .withScope("Namespaced")
                .withNewNames()
                .withKind("ServiceMonitor")
                .withPlural("servicemonitors")
                .withSingular("servicemonitor")
                .endNames()
                .addNewVersion()
                .withName("v1")
                .withServed(true)
                .withStorage(true)
                .withNewSchema()
                .withNewOpenAPIV3Schema()
                .withType("object")
                .withXKubernetesPreserveUnknownFields(true)
                .endOpenAPIV3Schema()
                .endSchema()
                .endVersion()
                .endSpec()
                .build();
    }

    private void setReady(String name) {
        client.apps().statefulSets().inNamespace(ns).withName(name + "-fast").editStatus(s -> {
            s.setStatus(new StatefulSetStatusBuilder()
                    .withReplicas(3)
                    .withReadyReplicas(3)
                    .build());
            return s;
        });
        for (String deployment : List.of(name + "-proxy", name + "-feeder")) {
            client.apps().deployments().inNamespace(ns).withName(deployment).editStatus(d -> {
                int replicas = d.getSpec().getReplicas();
                d.setStatus(new DeploymentStatusBuilder()
                        .withReplicas(replicas)
                        .withReadyReplicas(replicas)
                        .withAvailableReplicas(replicas)
                        .build());
                return d;
            });
        }
    }

    private void create(String name) {
        create(cluster(ns, name));
    }
}
