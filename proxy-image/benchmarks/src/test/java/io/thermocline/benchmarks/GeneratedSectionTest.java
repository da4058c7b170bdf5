package io.thermocline.benchmarks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class GeneratedSectionTest {
    private final GeneratedSection section = new GeneratedSection("FleetBenchmark");

    @Test
    void aRerunReplacesOnlyTheTextBetweenTheMarkers(@TempDir Path dir) throws Exception {
        Path doc = dir.resolve("fleet.md");
        Files.writeString(doc, "# Fleet\n\nintro by hand\n\n" + section.start() + "\n\n| old table |\n\n" + section.end()
                + "\n\n## Scaling model\n\nwritten by hand\n");
        section.write(doc, "Fleet", "| new table |\n");
        String text = Files.readString(doc);
        assertThat(text).contains("intro by hand", "| new table |", "## Scaling model\n\nwritten by hand\n")
                .doesNotContain("| old table |");
        assertThat(text.indexOf("| new table |")).isBetween(text.indexOf(section.start()), text.indexOf(section.end()));
        section.write(doc, "Fleet", "| newer table |\n");
        assertThat(Files.readString(doc)).isEqualTo(text.replace("| new table |", "| newer table |"));
    }

    @Test
    void aDocumentWithoutMarkersKeepsItsTextAndGetsTheSectionAfterIt(@TempDir Path dir) throws Exception {
        Path doc = dir.resolve("fleet.md");
        Files.writeString(doc, "# Fleet\n\nnotes\n");
        section.write(doc, "Fleet", "| table |");
        assertThat(Files.readString(doc)).startsWith("# Fleet\n\nnotes\n\n" + section.start()).endsWith(section.end() + "\n");
        Path fresh = dir.resolve("new.md");
        section.write(fresh, "Secondary reads", "| table |");
        assertThat(Files.readString(fresh)).startsWith("# Secondary reads\n\n" + section.start());
    }
}
