package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.app.Thermocline;
import org.junit.jupiter.api.Test;

class EmbeddedMainTest {

    @Test
    void theDemoJarRunsEveryProductionCommandAndEmbeddedWhichOnlyItCarries() {
        assertThat(EmbeddedMain.commandLine().getSubcommands()).containsKeys("proxy", "feeder", "evictor", "warmer", "embedded");
        assertThat(Thermocline.commandLine().getSubcommands()).containsKeys("proxy", "feeder").doesNotContainKey("embedded");
    }

    @Test
    void topLevelHelpGivesEmbeddedAWholeSentence() {
        java.io.StringWriter out = new java.io.StringWriter();
        picocli.CommandLine cli = EmbeddedMain.commandLine();
        cli.setOut(new java.io.PrintWriter(out));
        assertThat(cli.execute("--help")).isZero();
        // the command list shows a description's first line only: it must say what the command does on its own
        String listed = out.toString().lines().dropWhile(l -> !l.trim().startsWith("embedded"))
                .takeWhile(l -> l.trim().startsWith("embedded") || l.startsWith("      ") && !l.trim().isEmpty())
                .map(String::trim).reduce("", (a, b) -> a + " " + b);
        assertThat(listed).contains("the whole tiered stack in one process").contains("not production").endsWith(".");
    }
}
