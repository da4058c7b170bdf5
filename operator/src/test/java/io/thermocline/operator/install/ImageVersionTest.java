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
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Issue 44 item 1 (the version-agreement part): the images, the install manifests, the Helm chart, the operator's
 * default data plane and the docs name one release, {@code thermocline.release} of the root pom, so an install never
 * pairs an operator with a data plane of another release, and no one is told to pull a tag that is not built.
 */
@Timeout(30)
class ImageVersionTest {

    private static final Path ROOT = Path.of("..");
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final String OPERATOR_IMAGE = "ghcr.io/thermocline/thermocline-operator";
    private static final String DATA_PLANE_IMAGE = "ghcr.io/thermocline/thermocline";
    /** Either image with a tag, wherever it is written. */
    private static final Pattern IMAGE_WITH_TAG =
            Pattern.compile("ghcr\\.io/thermocline/thermocline(?:-operator)?:([A-Za-z0-9_.-]*[A-Za-z0-9_-])");

    @Test
    void theReleaseIsAReleaseVersion() throws Exception {
        assertThat(release(ROOT))
                .as("thermocline.release in pom.xml: the tag users pull, never a SNAPSHOT")
                .matches("\\d+\\.\\d+\\.\\d+");
    }

    @Test
    void imagesManifestsChartAndDocsNameTheRelease() throws Exception {
        assertThat(disagreements(ROOT)).isEmpty();
    }

    /** The check itself catches a planted mismatch in each kind of place (a copy of the files, one changed). */
    @Test
    void aMismatchAnywhereIsNamed(@TempDir Path copy) throws Exception {
        String release = release(ROOT);
        for (String file : List.of(
                "examples/install/kustomization.yaml",
                "examples/install/operator.yaml",
                "examples/helm/thermocline-operator/Chart.yaml",
                "examples/helm/thermocline-operator/values.yaml",
                "operator/src/main/resources/application.properties",
                "operator/pom.xml",
                "proxy-image/app/pom.xml",
                "docs/images.md")) {
            Path root = copy.resolve(file.replace('/', '_'));
            copyPlaces(ROOT, root);
            Path planted = root.resolve(file);
            String text = Files.readString(planted);
            String changed = file.endsWith("pom.xml")
                    ? text.replace("${thermocline.release}", "${project.version}")
                    : text.replace(release, release + ".1");
            assertThat(changed).as("%s names the release", file).isNotEqualTo(text);
            Files.writeString(planted, changed);

            assertThat(disagreements(root))
                    .as("planted in %s", file)
                    .anySatisfy(d -> assertThat(d).startsWith(file));
        }
    }

    /** Every place that names an image version, with what it names when that is not the release. */
    static List<String> disagreements(Path root) throws Exception {
        String release = release(root);
        List<String> wrong = new ArrayList<>();

        JsonNode kustomization = YAML.readTree(
                root.resolve("examples/install/kustomization.yaml").toFile());
        boolean operatorTagged = false;
        for (JsonNode image : kustomization.path("images")) {
            if (image.path("name").asText().equals(OPERATOR_IMAGE)) {
                operatorTagged = true;
                expect(
                        wrong,
                        "examples/install/kustomization.yaml images[" + OPERATOR_IMAGE + "].newTag",
                        image.path("newTag").asText(),
                        release);
            }
        }
        if (!operatorTagged) {
            wrong.add("examples/install/kustomization.yaml: no images entry tags " + OPERATOR_IMAGE);
        }
        expect(
                wrong,
                "examples/install/operator.yaml THERMOCLINE_OPERATOR_DATA_PLANE_IMAGE",
                envValue(root.resolve("examples/install/operator.yaml"), "THERMOCLINE_OPERATOR_DATA_PLANE_IMAGE"),
                DATA_PLANE_IMAGE + ":" + release);

        JsonNode chart = YAML.readTree(
                root.resolve("examples/helm/thermocline-operator/Chart.yaml").toFile());
        expect(
                wrong,
                "examples/helm/thermocline-operator/Chart.yaml appVersion",
                chart.path("appVersion").asText(),
                release);
        JsonNode values = YAML.readTree(
                root.resolve("examples/helm/thermocline-operator/values.yaml").toFile());
        expect(
                wrong,
                "examples/helm/thermocline-operator/values.yaml dataPlaneImage",
                values.path("dataPlaneImage").asText(),
                DATA_PLANE_IMAGE + ":" + release);
        // empty: the operator's tag is the chart's appVersion
        expect(
                wrong,
                "examples/helm/thermocline-operator/values.yaml image.tag",
                values.at("/image/tag").asText(),
                "");

        expect(
                wrong,
                "operator/src/main/resources/application.properties thermocline.operator.data-plane-image",
                property(
                        root.resolve("operator/src/main/resources/application.properties"),
                        "thermocline.operator.data-plane-image"),
                DATA_PLANE_IMAGE + ":" + release);

        // the image builds: tagged and labelled with the release
        expect(
                wrong,
                "operator/pom.xml operator.image",
                pomText(root.resolve("operator/pom.xml"), "operator.image"),
                OPERATOR_IMAGE + ":${thermocline.release}");
        expect(
                wrong,
                "proxy-image/app/pom.xml image",
                pomText(root.resolve("proxy-image/app/pom.xml"), "image"),
                DATA_PLANE_IMAGE + ":${thermocline.release}");
        for (String pom : List.of("operator/pom.xml", "proxy-image/app/pom.xml")) {
            expect(
                    wrong,
                    pom + " org.opencontainers.image.version",
                    pomText(root.resolve(pom), "org.opencontainers.image.version"),
                    "${thermocline.release}");
        }

        // prose and examples: any image named with a tag names the release
        List<Path> texts = new ArrayList<>();
        texts.add(root.resolve("README.md"));
        for (String dir : List.of("docs", "examples")) {
            try (Stream<Path> files = Files.walk(root.resolve(dir))) {
                files.filter(f -> f.toString().endsWith(".md") || f.toString().endsWith(".yaml"))
                        .sorted()
                        .forEach(texts::add);
            }
        }
        for (Path text : texts) {
            if (!Files.exists(text)) {
                continue;
            }
            Matcher m = IMAGE_WITH_TAG.matcher(Files.readString(text));
            while (m.find()) {
                if (!m.group(1).equals(release)) {
                    wrong.add(root.relativize(text) + " names " + m.group() + ", not " + release);
                }
            }
        }
        return wrong;
    }

    private static void expect(List<String> wrong, String place, String actual, String expected) {
        if (!expected.equals(actual)) {
            wrong.add(place + " is '" + actual + "', not '" + expected + "'");
        }
    }

    /** thermocline.release of the root pom. */
    static String release(Path root) throws Exception {
        return pomText(root.resolve("pom.xml"), "thermocline.release");
    }

    /** The text of the one element so named in a pom (a property or a label), or "" when there is none. */
    private static String pomText(Path pom, String element) throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
        var found = doc.getElementsByTagName(element);
        for (int i = 0; i < found.getLength(); i++) {
            Node node = found.item(i);
            // <image> also names the base and target inside Jib's <from>/<to>: take the property
            if (!element.equals("image")
                    || (node instanceof Element e
                            && e.getParentNode().getNodeName().equals("properties"))) {
                return node.getTextContent().trim();
            }
        }
        return "";
    }

    private static String property(Path file, String key) throws IOException {
        var properties = new java.util.Properties();
        try (var in = Files.newBufferedReader(file)) {
            properties.load(in);
        }
        return properties.getProperty(key, "");
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
        return "";
    }

    /** The files {@link #disagreements} reads, copied under {@code to}. */
    private static void copyPlaces(Path from, Path to) throws IOException {
        List<Path> files = new ArrayList<>(List.of(
                Path.of("pom.xml"),
                Path.of("README.md"),
                Path.of("operator/pom.xml"),
                Path.of("proxy-image/app/pom.xml"),
                Path.of("operator/src/main/resources/application.properties")));
        for (String dir : List.of("docs", "examples")) {
            try (Stream<Path> walk = Files.walk(from.resolve(dir))) {
                walk.filter(Files::isRegularFile).map(from::relativize).forEach(files::add);
            }
        }
        for (Path file : files) {
            Path target = to.resolve(file.toString());
            Files.createDirectories(target.getParent());
            Files.copy(from.resolve(file), target);
        }
    }
}
