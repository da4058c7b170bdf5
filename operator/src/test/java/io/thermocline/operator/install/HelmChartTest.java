package io.thermocline.operator.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Helm chart renders the objects the kustomize install renders: examples/helm/thermocline-operator
 * with default values against examples/install, and with monitoring.enabled against examples/monitoring.
 * Differences by design, removed before comparing: the labels Helm puts on what it owns
 * (helm.sh/chart, app.kubernetes.io/managed-by). Neither makes the Namespace (created beside the install,
 * or by Helm's {@code --create-namespace}, which {@code helm uninstall} leaves). The chart's crds/ are what
 * {@code helm install} applies before the templates (and never deletes): compared with the crds/ kustomization.
 */
@Timeout(180)
class HelmChartTest {

    private static final Path EXAMPLES = Path.of("..", "examples");
    private static final Path CHART = EXAMPLES.resolve("helm/thermocline-operator");
    /** The CRD's own kustomization (Helm installs its crds/ and never deletes them on uninstall). */
    private static final Path CRDS = Path.of("..", "crds");

    private static final String NAMESPACE = "thermocline-system";
    private static final List<String> HELM_LABELS = List.of("helm.sh/chart", "app.kubernetes.io/managed-by");
    private static final YAMLMapper YAML = new YAMLMapper();

    @Test
    void chartRendersTheKustomizeInstall() throws Exception {
        Map<String, JsonNode> kustomize = kustomize(EXAMPLES.resolve("install"));
        assertThat(kustomize.keySet())
                .as("uninstalling the operator must not delete clusters: no Namespace, no CRD")
                .noneMatch(key -> key.startsWith("Namespace/") || key.startsWith("CustomResourceDefinition/"));
        kustomize.putAll(kustomize(CRDS));
        Map<String, JsonNode> helm = helm(null);
        assertThat(helm.keySet())
                .contains(
                        "CustomResourceDefinition//thermoclineclusters.thermocline.io",
                        "Deployment/" + NAMESPACE + "/thermocline-operator",
                        "Service/" + NAMESPACE + "/thermocline-operator-metrics");
        assertSameObjects(helm, kustomize);
    }

    @Test
    void chartWithMonitoringRendersTheMonitoringInstall() throws Exception {
        Map<String, JsonNode> kustomize = kustomize(EXAMPLES.resolve("monitoring"));
        kustomize.putAll(kustomize(CRDS));
        Map<String, JsonNode> helm = helm(Map.of("monitoring.enabled", "true"));
        assertThat(helm.keySet())
                .contains(
                        "ServiceMonitor/" + NAMESPACE + "/thermocline-operator",
                        "PrometheusRule/" + NAMESPACE + "/thermocline",
                        "ConfigMap/" + NAMESPACE + "/thermocline-grafana-dashboard");
        assertSameObjects(helm, kustomize);
    }

    @Test
    void chartClusterWideRendersTheClusterWideInstall() throws Exception {
        Map<String, JsonNode> kustomize = kustomize(EXAMPLES.resolve("install-cluster-wide"));
        kustomize.putAll(kustomize(CRDS));
        Map<String, JsonNode> helm = helm(Map.of("watch.clusterWide", "true"));
        assertThat(helm.keySet())
                .contains("ClusterRole//thermocline-operator", "ClusterRoleBinding//thermocline-operator")
                .doesNotContain("Role/" + NAMESPACE + "/thermocline-operator");
        assertSameObjects(helm, kustomize);
    }

    @Test
    void chartWatchingAListHasARoleInEachNamespaceAndWatchesThem() throws Exception {
        Map<String, JsonNode> helm = helm(Map.of("watch.namespaces[0]", "shop", "watch.namespaces[1]", "billing"));
        Map<String, JsonNode> namespacedDefault = kustomize(EXAMPLES.resolve("install"));
        JsonNode rules = namespacedDefault
                .get("Role/" + NAMESPACE + "/thermocline-operator")
                .path("rules");
        for (String namespace : List.of("shop", "billing")) {
            assertThat(helm.get("Role/" + namespace + "/thermocline-operator").path("rules"))
                    .isEqualTo(rules);
            assertThat(helm.get("RoleBinding/" + namespace + "/thermocline-operator")
                            .at("/subjects/0/namespace")
                            .asText())
                    .isEqualTo(NAMESPACE);
        }
        assertThat(helm)
                .doesNotContainKeys("Role/" + NAMESPACE + "/thermocline-operator", "ClusterRole//thermocline-operator");
        JsonNode env = helm.get("Deployment/" + NAMESPACE + "/thermocline-operator")
                .at("/spec/template/spec/containers/0/env");
        assertThat(env.findValuesAsText("value")).contains("shop,billing");
    }

    /**
     * Issue 42 item 9: a default kube-prometheus-stack's Prometheus selects ServiceMonitors and PrometheusRules by
     * {@code release: <its Helm release>} (serviceMonitorSelector and ruleSelector from its Helm values) and ignores the
     * others: the monitoring install carries that label, and has the operator put it on each cluster's ServiceMonitor.
     */
    @Test
    void monitoringCarriesTheLabelsADefaultKubePrometheusStackSelects() throws Exception {
        Map<String, String> kubePrometheusStack = Map.of("release", "kube-prometheus-stack");
        Map<String, JsonNode> kustomize = kustomize(EXAMPLES.resolve("monitoring"));
        for (String key : List.of(
                "ServiceMonitor/" + NAMESPACE + "/thermocline-operator",
                "PrometheusRule/" + NAMESPACE + "/thermocline")) {
            kubePrometheusStack.forEach((label, value) -> assertThat(
                            kustomize.get(key).at("/metadata/labels/" + label).asText())
                    .as(key)
                    .isEqualTo(value));
        }
        assertThat(monitoringLabelsSetting(kustomize)).isEqualTo("release=kube-prometheus-stack");
        // another release name, one value
        Map<String, JsonNode> helm =
                helm(Map.of("monitoring.enabled", "true", "monitoring.selectorLabels.release", "monitoring"));
        assertThat(helm.get("ServiceMonitor/" + NAMESPACE + "/thermocline-operator")
                        .at("/metadata/labels/release")
                        .asText())
                .isEqualTo("monitoring");
        assertThat(helm.get("PrometheusRule/" + NAMESPACE + "/thermocline")
                        .at("/metadata/labels/release")
                        .asText())
                .isEqualTo("monitoring");
        assertThat(monitoringLabelsSetting(helm)).isEqualTo("release=monitoring");
    }

    private static String monitoringLabelsSetting(Map<String, JsonNode> objects) {
        JsonNode env = objects.get("Deployment/" + NAMESPACE + "/thermocline-operator")
                .at("/spec/template/spec/containers/0/env");
        for (JsonNode variable : env) {
            if (variable.path("name").asText().equals("THERMOCLINE_OPERATOR_MONITORING_LABELS")) {
                return variable.path("value").asText();
            }
        }
        return null;
    }

    @Test
    void chartValuesReachTheOperatorDeployment() throws Exception {
        Map<String, JsonNode> helm =
                helm(Map.of("image.tag", "9.9.9", "dataPlaneImage", "registry.example/thermocline:9.9.9"));
        JsonNode container =
                helm.get("Deployment/" + NAMESPACE + "/thermocline-operator").at("/spec/template/spec/containers/0");
        assertThat(container.path("image").asText()).isEqualTo("ghcr.io/thermocline/thermocline-operator:9.9.9");
        assertThat(container.at("/env/0/value").asText()).isEqualTo("registry.example/thermocline:9.9.9");
    }

    private static void assertSameObjects(Map<String, JsonNode> helm, Map<String, JsonNode> kustomize) {
        assertThat(kustomize)
                .as("the namespace is created beside the install, never by it")
                .doesNotContainKey("Namespace//" + NAMESPACE);
        assertThat(helm.keySet())
                .as("objects (kind/namespace/name)")
                .containsExactlyInAnyOrderElementsOf(kustomize.keySet());
        kustomize.forEach((key, expected) -> {
            List<String> differences = new java.util.ArrayList<>();
            differences("", expected, helm.get(key), differences);
            assertThat(differences).as(key + ": kustomize vs helm").isEmpty();
        });
    }

    /** Where two objects differ, as JSON pointers with both values (shortened), so a failure is readable. */
    private static void differences(String path, JsonNode expected, JsonNode actual, List<String> out) {
        if (expected.equals(actual)) {
            return;
        }
        if (expected.isNumber()
                && actual != null
                && actual.isNumber()
                && expected.decimalValue().compareTo(actual.decimalValue()) == 0) {
            return; // 1 and 1.0 (the generated CRD writes 1.0; kustomize re-serializes it as 1)
        }
        if (expected.isObject() && actual != null && actual.isObject()) {
            java.util.Set<String> fields = new java.util.TreeSet<>();
            expected.fieldNames().forEachRemaining(fields::add);
            actual.fieldNames().forEachRemaining(fields::add);
            for (String field : fields) {
                differences(path + "/" + field, expected.path(field), actual.path(field), out);
            }
        } else if (expected.isArray() && actual != null && actual.isArray() && expected.size() == actual.size()) {
            for (int i = 0; i < expected.size(); i++) {
                differences(path + "/" + i, expected.get(i), actual.get(i), out);
            }
        } else {
            out.add(path + ": " + shorten(expected) + " != " + shorten(actual));
        }
    }

    private static String shorten(JsonNode node) {
        String text = node == null || node.isMissingNode() ? "(absent)" : node.toString();
        return text.length() > 120 ? text.substring(0, 120) + "..." : text;
    }

    private static Map<String, JsonNode> helm(Map<String, String> values) throws IOException {
        assumeTrue(
                "amd64".equals(System.getProperty("os.arch"))
                        && System.getProperty("os.name").startsWith("Linux"),
                "helm-java's native Helm is declared for linux-amd64 only; this test renders the chart there");
        TemplateCommand template =
                new Helm(CHART).template().withName("thermocline-operator").withNamespace(NAMESPACE);
        if (values != null) {
            values.forEach(template::set);
        }
        StringBuilder rendered = new StringBuilder(template.call());
        try (Stream<Path> crds = Files.list(CHART.resolve("crds"))) {
            for (Path crd : crds.sorted().toList()) {
                rendered.append("\n---\n").append(Files.readString(crd));
            }
        }
        Map<String, JsonNode> objects = objects(rendered.toString());
        objects.values().forEach(HelmChartTest::withoutHelmLabels);
        return objects;
    }

    private static Map<String, JsonNode> kustomize(Path dir) throws IOException, InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder("kubectl", "kustomize", dir.toString())
                    .redirectErrorStream(false)
                    .start();
        } catch (IOException e) {
            assumeTrue(
                    false,
                    "kubectl is not on PATH (" + e.getMessage()
                            + "): .ci/run installs it; this test compares the chart "
                            + "with `kubectl kustomize` and is skipped without it");
            throw e;
        }
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue())
                .as("kubectl kustomize " + dir + ": " + err)
                .isZero();
        return objects(new String(out, StandardCharsets.UTF_8));
    }

    /** kind/namespace/name -> object, for every document of a multi-document YAML stream. */
    private static Map<String, JsonNode> objects(String yaml) throws IOException {
        Map<String, JsonNode> objects = new TreeMap<>();
        try (var documents = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml)) {
            while (documents.hasNext()) {
                JsonNode object = documents.next();
                if (object == null || object.isNull() || object.isMissingNode() || object.isEmpty()) {
                    continue;
                }
                String key = object.path("kind").asText() + "/"
                        + object.at("/metadata/namespace").asText("") + "/"
                        + object.at("/metadata/name").asText();
                assertThat(objects.put(key, object))
                        .as("one object per name: " + key)
                        .isNull();
            }
        }
        return objects;
    }

    private static void withoutHelmLabels(JsonNode object) {
        if (object.path("metadata") instanceof ObjectNode metadata
                && metadata.path("labels") instanceof ObjectNode labels) {
            labels.remove(HELM_LABELS);
            if (labels.isEmpty()) {
                metadata.remove("labels");
            }
        }
    }
}
