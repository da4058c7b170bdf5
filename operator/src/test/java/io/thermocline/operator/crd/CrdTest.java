package io.thermocline.operator.crd;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The checked-in CRD under crds/ is what the Java model generates (Quarkus writes it to
 * target/kubernetes while building the test application), and its schema carries the
 * validation that makes kubectl reject bad input.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class CrdTest {

    private static final String FILE = "thermoclineclusters.thermocline.io-v1.yml";
    private static final Path GENERATED = Path.of("target", "kubernetes", FILE);
    private static final Path CHECKED_IN = Path.of("..", "crds", FILE);

    /** The generated CRD with its printer columns in {@link ThermoclineCluster#PRINTER_COLUMNS}' order: what crds/ holds. */
    private static final Path ORDERED = Path.of("target", "kubernetes", "crds", FILE);

    @Test
    void checkedInCrdMatchesTheGeneratedOne() throws IOException {
        assertThat(GENERATED).exists();
        String ordered = withColumnsInOrder(Files.readString(GENERATED));
        Files.createDirectories(ORDERED.getParent());
        Files.writeString(ORDERED, ordered);
        assertThat(Files.readString(CHECKED_IN))
                .as("crds/%s is stale: run the operator tests and copy %s to crds/", FILE, ORDERED)
                .isEqualTo(ordered);
    }

    @Test
    void printerColumnsAreInTheDocumentedOrderAndShowWhatRuns() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(CHECKED_IN), CustomResourceDefinition.class);
        var columns = crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns();
        assertThat(columns).extracting(c -> c.getName()).containsExactlyElementsOf(ThermoclineCluster.PRINTER_COLUMNS);
        // what runs, from the status: ready/wanted members and proxies, members on the current template
        assertThat(columns).extracting(c -> c.getName() + "=" + c.getJsonPath())
                .contains("Members=.status.members", "Updated=.status.membersUpdated", "Proxies=.status.proxies");
        // whether the operator chose the mode (spec.mode unset: shadow over an archive holding data)
        assertThat(columns).extracting(c -> c.getName() + "=" + c.getJsonPath()).contains("ModeSource=.status.mode.source");
        assertThat(columns).filteredOn(c -> c.getName().equals("Connection")).singleElement()
                .satisfies(c -> assertThat(c.getPriority()).as("-o wide only").isEqualTo(1));
    }

    /** Reorders the {@code additionalPrinterColumns} entries of the generated YAML, leaving every other byte alone. */
    static String withColumnsInOrder(String crd) {
        String head = "  - additionalPrinterColumns:\n";
        int start = crd.indexOf(head) + head.length();
        int end = crd.indexOf("    name: \"" + ThermoclineCluster.VERSION + "\"", start);
        assertThat(start).isGreaterThan(head.length() - 1);
        assertThat(end).isGreaterThan(start);
        java.util.List<String> entries = new java.util.ArrayList<>(java.util.List.of(crd.substring(start, end).split("(?=    - jsonPath: )")));
        java.util.regex.Pattern name = java.util.regex.Pattern.compile("\n      name: \"([^\"]+)\"");
        java.util.function.ToIntFunction<String> rank = entry -> {
            java.util.regex.Matcher m = name.matcher(entry);
            assertThat(m.find()).as(entry).isTrue();
            int at = ThermoclineCluster.PRINTER_COLUMNS.indexOf(m.group(1));
            assertThat(at).as("column %s is missing from ThermoclineCluster.PRINTER_COLUMNS", m.group(1)).isNotNegative();
            return at;
        };
        entries.sort(java.util.Comparator.comparingInt(rank));
        return crd.substring(0, start) + String.join("", entries) + crd.substring(end);
    }

    @Test
    void schemaRejectsBadInput() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(CHECKED_IN), CustomResourceDefinition.class);
        JSONSchemaProps spec = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("spec");
        assertThat(spec.getRequired()).contains("archive");
        assertThat(spec.getProperties().get("archive").getRequired()).contains("uriSecretRef");
        JSONSchemaProps fastTier = spec.getProperties().get("fastTier");
        assertThat(fastTier.getProperties().get("members").getMinimum()).isEqualTo(1.0);
        assertThat(fastTier.getProperties().get("members").getMaximum()).isEqualTo(7.0);
        assertThat(fastTier.getProperties().get("version").getPattern()).isEqualTo("^(auto|[0-9]+\\.[0-9]+\\.[0-9]+)$");
        JSONSchemaProps collection = spec.getProperties().get("collections").getItems().getSchema();
        assertThat(collection.getRequired()).contains("database", "collection", "hotWindow");
        assertThat("30d").matches(collection.getProperties().get("hotWindow").getPattern());
        assertThat("30 days").doesNotMatch(collection.getProperties().get("hotWindow").getPattern());
        JSONSchemaProps secondaryReads = collection.getProperties().get("secondaryReads");
        assertThat(secondaryReads.getDefault().asText()).isEqualTo("primary");
        assertThat("offload").matches(secondaryReads.getPattern());
        assertThat("secondary").doesNotMatch(secondaryReads.getPattern());
        assertThat(spec.getProperties().get("collections").getXKubernetesValidations()).singleElement()
                .satisfies(rule -> assertThat(rule.getMessage()).contains("only once"));
        assertThat(spec.getProperties().get("proxy").getProperties().get("replicas").getMinimum()).isEqualTo(1.0);
        JSONSchemaProps readConsistency = spec.getProperties().get("proxy").getProperties().get("readConsistency");
        assertThat("linearizable").matches(readConsistency.getPattern());
        assertThat("session").matches(readConsistency.getPattern());
        assertThat("eventual").doesNotMatch(readConsistency.getPattern());
        assertThat(readConsistency.getDefault().asText()).isEqualTo("linearizable");
        assertThat(crd.getSpec().getVersions().get(0).getSubresources().getStatus()).isNotNull();
        // no default: an unset mode is the operator's to choose (a new cluster over an archive holding data starts in shadow)
        assertThat(spec.getProperties().get("mode").getDefault()).isNull();
        assertThat(spec.getProperties().get("mode").getEnum()).extracting(v -> v.asText()).containsExactlyInAnyOrder("shadow", "tiered", "draining");
        // names whose derived objects (NAME-evictor, NAME-warmer-<hash>) would exceed Kubernetes' limits are refused at admission
        assertThat(crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getXKubernetesValidations())
                .anySatisfy(rule -> {
                    assertThat(rule.getRule()).isEqualTo("self.metadata.name.size() <= 44");
                    assertThat(rule.getMessage()).contains("44");
                });
    }

    /** metadata.name prefixes Service names: a DNS-1035 label, which a resource name (a DNS subdomain) need not be. */
    @Test
    void namesThatCannotPrefixAServiceAreRefused() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(CHECKED_IN), CustomResourceDefinition.class);
        String rule = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getXKubernetesValidations().stream()
                .map(r -> r.getRule()).filter(r -> r.startsWith("self.metadata.name.matches(")).findFirst().orElseThrow();
        String pattern = rule.substring(rule.indexOf("('") + 2, rule.lastIndexOf("')"));
        for (String fine : java.util.List.of("orders", "a", "shop-2", "a1b2")) {
            assertThat(fine).as(fine).matches(pattern);
        }
        for (String refused : java.util.List.of("1orders", "shop.orders", "Orders", "orders-", "-orders", "shop_orders")) {
            assertThat(refused).as(refused).doesNotMatch(pattern);
        }
    }

    /** Issue 44 item 2: the proxy Service's exposure, validated where the API server would refuse the Service later. */
    @Test
    void exposeIsValidatedAtAdmission() throws IOException {
        JSONSchemaProps expose = spec().getProperties().get("proxy").getProperties().get("expose");
        String type = expose.getProperties().get("type").getPattern();
        for (String fine : java.util.List.of("ClusterIP", "NodePort", "LoadBalancer")) {
            assertThat(fine).matches(type);
        }
        assertThat("ExternalName").doesNotMatch(type);
        assertThat(expose.getProperties().get("type").getDefault().asText()).isEqualTo("ClusterIP");
        assertThat("Local").matches(expose.getProperties().get("externalTrafficPolicy").getPattern());
        assertThat("local").doesNotMatch(expose.getProperties().get("externalTrafficPolicy").getPattern());
        assertThat(expose.getProperties().get("annotations").getAdditionalProperties().getSchema().getType()).isEqualTo("string");
        assertThat(expose.getXKubernetesValidations()).extracting(r -> r.getRule() + " => " + r.getMessage())
                .anySatisfy(r -> assertThat(r).contains("self.type == 'LoadBalancer'").contains("loadBalancerSourceRanges needs"))
                .anySatisfy(r -> assertThat(r).contains("self.type != 'ClusterIP'").contains("externalTrafficPolicy needs"));
        JSONSchemaProps ranges = expose.getProperties().get("loadBalancerSourceRanges");
        assertThat(ranges.getMaxItems()).isEqualTo(64L);
        assertThat(ranges.getItems().getSchema().getMaxLength()).isEqualTo(64L);
        String cidr = ranges.getItems().getSchema().getPattern();
        for (String fine : java.util.List.of("10.0.0.0/8", "192.168.1.7/32", "2001:db8::/32", "::/0")) {
            assertThat(fine).as(fine).matches(cidr);
        }
        for (String refused : java.util.List.of("10.0.0.0", "office", "10.0.0.0/8 ", "")) {
            assertThat(refused).as(refused).doesNotMatch(cidr);
        }
    }

    /** The scheduling fields of every component are Kubernetes' own types (so kubectl explain and validation know them). */
    @Test
    void everyComponentHasKubernetesSchedulingFields() throws IOException {
        JSONSchemaProps spec = spec();
        for (String component : java.util.List.of("fastTier", "proxy", "feeder", "evictor", "warmer")) {
            var fields = spec.getProperties().get(component).getProperties();
            assertThat(fields).as(component).containsKeys("nodeSelector", "tolerations", "affinity", "priorityClassName",
                    "topologySpreadConstraints", "resources");
            assertThat(fields.get("affinity").getProperties()).as(component).containsKeys("nodeAffinity", "podAntiAffinity");
            assertThat(fields.get("topologySpreadConstraints").getItems().getSchema().getProperties()).as(component)
                    .containsKeys("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector");
            assertThat(fields.get("tolerations").getItems().getSchema().getProperties()).as(component).containsKeys("key", "effect");
        }
    }

    /** mongod refuses an option given twice: those the operator sets are refused at admission, by the Java model's own pattern. */
    @Test
    void mongodOptionsTheOperatorSetsAreRefusedAtAdmission() throws IOException {
        JSONSchemaProps args = spec().getProperties().get("fastTier").getProperties().get("mongodArgs");
        String owned = celPattern(args.getXKubernetesValidations().get(0).getRule());
        assertThat(owned).isEqualTo(io.thermocline.operator.api.v1alpha1.FastTierSpec.MONGOD_ARGS_OWNED);
        assertThat(args.getXKubernetesValidations().get(0).getRule()).startsWith("self.all(a, !a.matches(");
        // the API server refuses a rule whose estimated cost (from the longest list and strings) exceeds its budget
        assertThat(args.getMaxItems()).isEqualTo(40L);
        assertThat(args.getItems().getSchema().getMaxLength()).isEqualTo(1024L);
        assertThat("--port=27018").matches(owned);
        assertThat("--setParameter").doesNotMatch(owned);
    }

    private static JSONSchemaProps spec() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(CHECKED_IN), CustomResourceDefinition.class);
        return crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("spec");
    }

    /** The regular expression of a rule's {@code matches('...')}. */
    private static String celPattern(String rule) {
        return rule.substring(rule.indexOf("matches('") + "matches('".length(), rule.lastIndexOf("')"));
    }

    /** The API server would refuse the StatefulSet update later, with every later step stuck behind it: refused at admission. */
    @Test
    void theStorageClassCannotChange() throws IOException {
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(CHECKED_IN), CustomResourceDefinition.class);
        JSONSchemaProps storage = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("spec")
                .getProperties().get("fastTier").getProperties().get("storage");
        assertThat(storage.getXKubernetesValidations()).singleElement().satisfies(r -> {
            assertThat(r.getRule()).contains("oldSelf.storageClassName").contains("has(self.storageClassName) == has(oldSelf.storageClassName)");
            assertThat(r.getMessage()).contains("storageClassName cannot change");
        });
    }
}
