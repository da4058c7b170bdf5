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
}
