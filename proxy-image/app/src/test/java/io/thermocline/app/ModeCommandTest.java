package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.embedded.EmbeddedReplicaSet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code thermocline mode ... --wait}: progress while waiting, and on a timeout a sentence saying the request stays. */
@Timeout(120)
class ModeCommandTest {

    @TempDir
    Path dir;

    @Test
    void aWaitThatTimesOutPrintsProgressAndSaysTheRequestStaysPending() throws Exception {
        try (EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().name("archive").build().start()) {
            Path config = Files.writeString(dir.resolve("thermocline.yaml"),
                    "tiers:\n  archive: {uri: '" + archive.connectionString() + "'}\n  fast: {uri: '" + fast.connectionString() + "'}\n"
                            + "auth: {mode: disabled}\n"
                            + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n");
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cli = Thermocline.commandLine();
            cli.setOut(new PrintWriter(out));
            cli.setErr(new PrintWriter(err));
            // no proxy runs a mode controller here: the fleet never reaches Shadowing
            int code = cli.execute("mode", "shadow", "--wait", "Shadowing", "--timeout", "1", "--config", config.toString());
            assertThat(code).isEqualTo(1);
            assertThat(out.toString()).contains("requested shadow").containsPattern("\\s+0 s: phase Tiered, active tiered");
            assertThat(err.toString()).contains("not Shadowing after 1 s: phase Tiered")
                    .contains("The request for shadow stays pending")
                    .contains("To withdraw it, request the active mode: thermocline mode tiered");
        }
    }
}
