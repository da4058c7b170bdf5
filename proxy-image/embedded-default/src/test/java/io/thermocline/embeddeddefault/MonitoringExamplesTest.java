package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.thermocline.embeddeddefault.monitoring.PromQl;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/monitoring: the Grafana dashboard and the alert rules parse, have what they are for,
 * and name only metrics the code exports. The data plane's names come from a running embedded
 * stack's /metrics (proxy, feeder, evictor and warmer registries, as in production); the
 * operator's (thermocline_cluster_*, reconciliations_*) are checked by the operator's
 * ObservabilityDependentsTest against its /q/metrics.
 */
@Timeout(120)
class MonitoringExamplesTest {

    private static final Path MONITORING = Path.of("..", "..", "examples", "monitoring");
    private static final Path DASHBOARD = MONITORING.resolve("grafana/thermocline-dashboard.json");
    private static final Path RULES = MONITORING.resolve("prometheus/thermocline-rules.yaml");
    private static final Path PROMETHEUS_RULE = MONITORING.resolve("prometheusrule.yaml");
    private static final List<String> OPERATOR_PREFIXES = List.of("thermocline_cluster_", "reconciliations_");
    /** Series Prometheus makes itself for every target. */
    private static final Set<String> PROMETHEUS_SERIES = Set.of("up");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void everyMetricTheDashboardAndTheAlertsReadIsExported(@TempDir Path dir) throws Exception {
        Set<String> exported = dataPlaneMetricNames(dir);
        assertThat(exported)
                .contains(
                        "thermocline_proxy_commands_total",
                        "thermocline_feeder_lag_seconds",
                        "thermocline_warmer_documents_total",
                        "thermocline_evictor_documents_total",
                        "thermocline_proxy_routing_decisions_total",
                        "thermocline_proxy_barrier_wait_seconds_bucket");

        Set<String> used = new TreeSet<>();
        expressions().forEach((where, expr) -> used.addAll(PromQl.metricNames(expr)));
        List<String> missing = used.stream()
                .filter(name -> OPERATOR_PREFIXES.stream().noneMatch(name::startsWith))
                .filter(name -> !PROMETHEUS_SERIES.contains(name))
                .filter(name -> !exported.contains(name))
                .toList();
        assertThat(missing)
                .as("metric names in examples/monitoring that no data-plane registry exports")
                .isEmpty();
        assertThat(used)
                .as("the examples cover proxy, feeder, barrier and pool metrics")
                .contains(
                        "thermocline_proxy_routing_decisions_total",
                        "thermocline_feeder_lag_seconds",
                        "thermocline_proxy_barrier_wait_seconds_bucket",
                        "thermocline_proxy_pool_wait_seconds_bucket",
                        "thermocline_cluster_documents");
    }

    @Test
    void dashboardHasAQueryingPanelForEveryTopic() throws IOException {
        JsonNode dashboard = JSON.readTree(DASHBOARD.toFile());
        assertThat(dashboard.path("uid").asText()).isNotBlank();
        List<String> titles = new ArrayList<>();
        Set<Integer> ids = new TreeSet<>();
        for (JsonNode panel : dashboard.path("panels")) {
            assertThat(ids.add(panel.path("id").asInt()))
                    .as("panel ids are unique")
                    .isTrue();
            assertThat(panel.path("gridPos").path("w").asInt()).isBetween(1, 24);
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            titles.add(panel.path("title").asText());
            assertThat(panel.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
            assertThat(panel.path("targets"))
                    .as(panel.path("title").asText())
                    .isNotEmpty()
                    .allSatisfy(t -> assertThat(t.path("expr").asText()).isNotBlank());
        }
        assertThat(titles)
                .contains(
                        "Tier sizes (documents)",
                        "Read routing share by tier",
                        "Feeder lag",
                        "Mirror barrier wait (p99)",
                        "Backend pool wait (p99) and timeouts",
                        "Command errors and retryable refusals");
        List<String> variables = new ArrayList<>();
        dashboard
                .path("templating")
                .path("list")
                .forEach(v -> variables.add(v.path("name").asText()));
        assertThat(variables).containsExactly("datasource", "namespace", "cluster");
    }

    @Test
    void alertRulesAreCompleteAndThePrometheusRuleHoldsTheSameGroups() throws IOException {
        JsonNode rules = YAML.readTree(RULES.toFile());
        JsonNode resource = YAML.readTree(PROMETHEUS_RULE.toFile());
        assertThat(resource.path("kind").asText()).isEqualTo("PrometheusRule");
        assertThat(resource.path("apiVersion").asText()).isEqualTo("monitoring.coreos.com/v1");
        assertThat(resource.path("spec"))
                .as("PrometheusRule spec == the plain rules file")
                .isEqualTo(rules);

        Set<String> names = new TreeSet<>();
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                String alert = rule.path("alert").asText();
                assertThat(names.add(alert))
                        .as("alert names are unique: " + alert)
                        .isTrue();
                assertThat(alert).matches("Thermocline[A-Z][A-Za-z]+");
                assertThat(rule.path("labels").path("severity").asText())
                        .as(alert)
                        .isIn("warning", "critical");
                assertThat(rule.path("annotations").path("summary").asText())
                        .as(alert)
                        .isNotBlank();
                assertThat(rule.path("annotations").path("description").asText())
                        .as(alert)
                        .isNotBlank();
                if (rule.has("for")) {
                    assertThat(rule.path("for").asText()).as(alert).matches("(\\d+[smhd])+");
                }
            }
        }
        assertThat(names)
                .contains(
                        "ThermoclineFeederLagHigh",
                        "ThermoclineBackendPrimaryUnknown",
                        "ThermoclinePoolWaitTimeouts",
                        "ThermoclineBarrierTimeouts",
                        "ThermoclineClusterNotReady");
    }

    @Test
    void promQlCheckerAcceptsPrometheusSyntaxAndRejectsCommonMistakes() {
        assertThat(
                        PromQl.metricNames(
                                "sum by (tier) (rate(a_total{x=\"1\", y=~\"a|b\"}[5m])) / ignoring (tier) group_left sum(rate(a_total[5m]))"))
                .containsExactly("a_total");
        assertThat(PromQl.metricNames("max_over_time(rate(b[1m])[10m:30s]) > bool 3 and on (job) c offset 5m"))
                .containsExactly("b", "c");
        assertThat(PromQl.metricNames("histogram_quantile(0.99, sum without (pod) (rate(h_bucket[5m]))) unless -d ^ 2"))
                .containsExactly("d", "h_bucket");
        assertThat(PromQl.metricNames("topk(3, job:requests:rate5m)")).containsExactly("job:requests:rate5m");
        for (String broken : List.of(
                "rate(x)",
                "sum(rate(x[5m])",
                "x{a=b}",
                "x[5]",
                "frobnicate(x)",
                "histogram_quantile(x, y)",
                "x +",
                "sum(1)",
                "x{a=\"1\" b=\"2\"}",
                "x[5m]",
                "1 and x",
                "x{a=\"1\"")) {
            assertThatThrownBy(() -> PromQl.metricNames(broken))
                    .as(broken)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    /** Every PromQL expression under examples/monitoring, by where it is. */
    private static Map<String, String> expressions() throws IOException {
        Map<String, String> all = new LinkedHashMap<>();
        for (JsonNode panel : JSON.readTree(DASHBOARD.toFile()).path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                all.put(
                        "panel '" + panel.path("title").asText() + "' "
                                + target.path("refId").asText(),
                        target.path("expr").asText());
            }
        }
        for (JsonNode variable :
                JSON.readTree(DASHBOARD.toFile()).path("templating").path("list")) {
            String query = variable.path("query").path("query").asText();
            if (query.startsWith("label_values(")) {
                // label_values(<selector>, <label>) is Grafana's; its selector is PromQL
                all.put(
                        "variable " + variable.path("name").asText(),
                        query.substring("label_values(".length(), query.lastIndexOf(',')));
            }
        }
        for (Path file : List.of(RULES)) {
            for (JsonNode group : YAML.readTree(file.toFile()).path("groups")) {
                for (JsonNode rule : group.path("rules")) {
                    all.put(
                            file.getFileName() + " " + rule.path("alert").asText(),
                            rule.path("expr").asText());
                }
            }
        }
        assertThat(all).hasSizeGreaterThan(20);
        return all;
    }

    /**
     * The series names of the registries a running embedded stack serves on /metrics. Read from
     * the registries rather than the page, because a labelled metric nothing has counted yet
     * (no routing decision, no eviction) has no line on the page.
     */
    private static Set<String> dataPlaneMetricNames(Path dir) throws Exception {
        try (EmbeddedStack stack = EmbeddedStack.start(
                LocalStack.options(dir, "--sample-documents", "0"), new PrintWriter(new StringWriter(), true))) {
            HttpResponse<String> page = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.httpPort() + "/metrics"))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("thermocline_proxy_client_connections", "thermocline_feeder_lag_seconds");
            Set<String> names = new TreeSet<>();
            for (PrometheusRegistry registry : stack.registries()) {
                for (MetricSnapshot snapshot : registry.scrape()) {
                    String name = snapshot.getMetadata().getPrometheusName();
                    // the suffixes the text format gives each type's series
                    if (snapshot instanceof CounterSnapshot) {
                        names.add(name + "_total");
                    } else if (snapshot instanceof HistogramSnapshot) {
                        names.addAll(List.of(name + "_bucket", name + "_sum", name + "_count"));
                    } else {
                        names.add(name);
                    }
                }
            }
            return names;
        }
    }
}
