package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code thermocline mode ... --wait}: progress while waiting, and on a timeout a sentence saying the request stays. */
@Timeout(120)
class ModeCommandTest {

    @TempDir
    Path dir;

    @Test
    void aWaitThatTimesOutPrintsProgressAndSaysTheRequestStaysPending() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            Path config = tiers.config;
            // no proxy runs a mode controller here: the fleet never reaches Shadowing
            CommandRun run = CommandRun.thermocline(
                    "mode", "shadow", "--wait", "Shadowing", "--timeout", "1", "--config", config.toString());
            assertThat(run.exit()).isEqualTo(1);
            assertThat(run.out()).contains("requested shadow").containsPattern("\\s+0 s: phase Tiered, active tiered");
            assertThat(run.err())
                    .contains("not Shadowing after 1 s: phase Tiered")
                    .contains("The request for shadow stays pending")
                    .contains("To withdraw it, request the active mode: thermocline mode tiered");
        }
    }
}
