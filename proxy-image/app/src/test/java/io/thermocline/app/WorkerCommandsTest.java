package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class WorkerCommandsTest {

    @TempDir
    Path dir;

    record Run(int exitCode, String err) {}

    static Run run(Callable<Integer> command, String... args) {
        StringWriter err = new StringWriter();
        CommandLine line = new CommandLine(command);
        line.setErr(new PrintWriter(err));
        return new Run(line.execute(args), err.toString());
    }

    @Test
    void everyWorkerNeedsAConfigFile() {
        for (Callable<Integer> command :
                new Callable[] {new FeederCommand(Map.of()), new EvictorCommand(Map.of()), new WarmerCommand(Map.of())
                }) {
            Run result = run(command);
            assertThat(result.exitCode()).isEqualTo(2);
            assertThat(result.err()).contains("--config FILE is required");
        }
    }

    @Test
    void passThroughConfigIsRefusedWithTheFieldToSet() throws Exception {
        Path config =
                Files.writeString(dir.resolve("c.yaml"), "tiers: {archive: {uri: 'mongodb://localhost:27018'}}\n");
        Run result = run(new FeederCommand(Map.of()), "--config", config.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("tiers.fast.uri").contains("THERMOCLINE_TIERS_FAST_URI");
    }

    @Test
    void aConfigWithoutTieredCollectionsIsRefused() throws Exception {
        Path config = Files.writeString(
                dir.resolve("c.yaml"),
                "tiers: {archive: {uri: 'mongodb://localhost:27018'}, fast: {uri: 'mongodb://localhost:27019'}}\n");
        Run result = run(new EvictorCommand(Map.of()), "--config", config.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("collections is empty");
    }

    @Test
    void warmerAndEvictorRunToCompletionAgainstTwoReplicaSets() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            java.time.Instant now = java.time.Instant.now();
            LocalTiers.orders(tiers.archiveClient)
                    .insertMany(java.util.List.of(
                            new org.bson.Document("_id", 1).append("createdAt", java.util.Date.from(now)),
                            new org.bson.Document("_id", 2)
                                    .append("createdAt", java.util.Date.from(now.minusSeconds(7200)))));
            Path config = tiers.config;
            var loaded = tiers.loaded();
            try (var feeder = io.thermocline.tiering.feeder.Feeder.start(
                    loaded,
                    io.thermocline.tiering.feeder.Feeder.Options.defaults()
                            .withRegistry(new io.prometheus.metrics.model.registry.PrometheusRegistry()))) {
                assertThat(feeder.awaitStreaming(java.time.Duration.ofSeconds(30)))
                        .isTrue();
                assertThat(run(new WarmerCommand(Map.of()), "--config", config.toString())
                                .exitCode())
                        .isZero();
                assertThat(LocalTiers.orders(tiers.fastClient).countDocuments()).isEqualTo(1);
                assertThat(run(new EvictorCommand(Map.of()), "--config", config.toString())
                                .exitCode())
                        .isZero();
            }
        }
    }

    @Test
    void invalidConfigNamesTheFieldAndTheFix() throws Exception {
        Path config = Files.writeString(dir.resolve("c.yaml"), "tiers: {archive: {uri: 'not a uri'}}\n");
        Run result = run(new WarmerCommand(Map.of()), "--config", config.toString());
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err()).contains("thermocline warmer:").contains("tiers.archive.uri");
    }
}
