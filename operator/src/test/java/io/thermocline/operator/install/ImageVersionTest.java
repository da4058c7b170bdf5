package io.thermocline.operator.install;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 44 item 1 (the version-agreement part): the manifests, the Helm chart and the image builds name one version,
 * the project's, so an install never pairs an operator with a data plane or CRD of another release.
 */
@Timeout(30)
class ImageVersionTest {

    private static final Path ROOT = Path.of("..");
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final String OPERATOR_IMAGE = "ghcr.io/thermocline/thermocline-operator";
    private static final String DATA_PLANE_IMAGE = "ghcr.io/thermocline/thermocline";

    @Test
    void manifestsChartAndImageBuildsNameTheProjectVersion() throws IOException {
        String version = projectVersion();
        List<String> named = new ArrayList<>();

        JsonNode kustomization = YAML.readTree(
                ROOT.resolve("examples/install/kustomization.yaml").toFile());
        for (JsonNode image : kustomization.path("images")) {
            if (image.path("name").asText().equals(OPERATOR_IMAGE)) {
                named.add("examples/install/kustomization.yaml images[" + OPERATOR_IMAGE + "].newTag="
                        + image.path("newTag").asText());
            }
        }
        named.add("examples/install/operator.yaml THERMOCLINE_OPERATOR_DATA_PLANE_IMAGE="
                + tagOf(
                        envValue(
                                ROOT.resolve("examples/install/operator.yaml"),
                                "THERMOCLINE_OPERATOR_DATA_PLANE_IMAGE"),
                        DATA_PLANE_IMAGE));
        JsonNode chart = YAML.readTree(
                ROOT.resolve("examples/helm/thermocline-operator/Chart.yaml").toFile());
        named.add("Chart.yaml appVersion=" + chart.path("appVersion").asText());
        JsonNode values = YAML.readTree(
                ROOT.resolve("examples/helm/thermocline-operator/values.yaml").toFile());
        named.add("values.yaml dataPlaneImage="
                + tagOf(values.path("dataPlaneImage").asText(), DATA_PLANE_IMAGE));
        assertThat(values.at("/image/tag").asText())
                .as("values.yaml image.tag: empty, so the chart's appVersion")
                .isEmpty();

        assertThat(named)
                .hasSize(4)
                .allSatisfy(entry ->
                        assertThat(entry).as("names version %s", version).endsWith("=" + version));

        // the image builds tag with the project version; the operator's default data plane is its own version
        assertThat(Files.readString(ROOT.resolve("operator/pom.xml")))
                .contains("<operator.image>" + OPERATOR_IMAGE + ":${project.version}</operator.image>");
        assertThat(Files.readString(ROOT.resolve("proxy-image/app/pom.xml")))
                .contains("<image>" + DATA_PLANE_IMAGE + ":${project.version}</image>");
        assertThat(Files.readString(Path.of("src/main/resources/application.properties")))
                .contains("thermocline.operator.data-plane-image=" + DATA_PLANE_IMAGE
                        + ":${quarkus.application.version}");
    }

    /** The root pom's own version (the modules inherit it). */
    static String projectVersion() throws IOException {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        // the first <version> after </parent>, or the first at all when there is no parent
        int from = Math.max(0, pom.indexOf("</parent>"));
        Matcher m = Pattern.compile("<version>([^<]+)</version>").matcher(pom);
        assertThat(m.find(from)).as("pom.xml has a version").isTrue();
        return m.group(1).trim();
    }

    private static String envValue(Path manifest, String name) throws IOException {
        for (JsonNode doc : YAML.readerFor(JsonNode.class)
                .<JsonNode>readValues(Files.readString(manifest))
                .readAll()) {
            for (JsonNode container : doc.at("/spec/template/spec/containers")) {
                for (JsonNode env : container.path("env")) {
                    if (env.path("name").asText().equals(name)) {
                        return env.path("value").asText();
                    }
                }
            }
        }
        throw new AssertionError(name + " is not set in " + manifest);
    }

    private static String tagOf(String image, String repository) {
        assertThat(image).startsWith(repository + ":");
        return image.substring(repository.length() + 1);
    }
}
