package io.thermocline.operator.crd;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
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

    @Test
    void checkedInCrdMatchesTheGeneratedOne() throws IOException {
        assertThat(GENERATED).exists();
        assertThat(Files.readString(CHECKED_IN))
                .as("crds/%s is stale: run the operator tests and copy %s to crds/", FILE, GENERATED)
                .isEqualTo(Files.readString(GENERATED));
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
        assertThat(spec.getProperties().get("collections").getXKubernetesValidations()).singleElement()
                .satisfies(rule -> assertThat(rule.getMessage()).contains("only once"));
        assertThat(spec.getProperties().get("proxy").getProperties().get("replicas").getMinimum()).isEqualTo(1.0);
        assertThat(crd.getSpec().getVersions().get(0).getSubresources().getStatus()).isNotNull();
        // names whose derived objects (NAME-evictor, NAME-warmer-<hash>) would exceed Kubernetes' limits are refused at admission
        assertThat(crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getXKubernetesValidations())
                .anySatisfy(rule -> {
                    assertThat(rule.getRule()).isEqualTo("self.metadata.name.size() <= 44");
                    assertThat(rule.getMessage()).contains("44");
                });
        assertThat(crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns())
                .extracting(c -> c.getName() + "=" + c.getJsonPath())
                // what runs, from the status (the generator does not keep the annotations' order)
                .contains("Phase=.status.phase", "Members=.status.members", "Proxies=.status.proxies",
                        "Version=.status.fastTierVersion");
    }
}
