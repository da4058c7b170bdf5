package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code thermocline --version} names the release its image is tagged with (issue 44 item 1), in the production jar
 * and in the image alike (Jib's layout has no jar manifest to carry a version).
 */
@Timeout(30)
class VersionTest {

    @Test
    void versionIsTheReleaseTheImagesAreTaggedWith() throws Exception {
        var pom = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(Path.of("../../pom.xml").toFile());
        String release = pom.getElementsByTagName("thermocline.release")
                .item(0)
                .getTextContent()
                .trim();
        String project =
                pom.getElementsByTagName("version").item(0).getTextContent().trim();

        String version = CommandRun.thermocline("--version").succeeded();

        assertThat(version).startsWith("thermocline " + release);
        if (!project.equals(release)) {
            // between releases the image says which sources it was built from
            assertThat(version).isEqualTo("thermocline " + release + " (built from " + project + ")");
        }
    }
}
