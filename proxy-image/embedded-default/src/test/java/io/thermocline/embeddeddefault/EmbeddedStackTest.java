package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class EmbeddedStackTest {

    private static EmbeddedStack.Options options(Path dir, int samples) {
        return LocalStack.options(dir, "--sample-documents", String.valueOf(samples));
    }

    @Test
    void servesTheSampleDataThroughTheProxyAndWarmsTheWindow(@TempDir Path dir) throws Exception {
        StringWriter printed = new StringWriter();
        try (EmbeddedStack stack = EmbeddedStack.start(options(dir, 2000), new PrintWriter(printed, true));
                MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + stack.proxyPort() + "/")) {
            MongoCollection<Document> orders =
                    client.getDatabase(SampleData.DATABASE).getCollection(SampleData.COLLECTION);
            assertThat(orders.countDocuments()).isEqualTo(2000);
            assertThat(printed.toString()).contains("loaded 2000 sample orders");
            // every long step is announced before it runs, so the first minute is not silent
            String said = printed.toString();
            assertThat(said)
                    .containsSubsequence(
                            "starting the archive",
                            "starting the fast tier",
                            "starting the feeder",
                            "loading 2000 sample orders",
                            "starting the warmer",
                            "starting the proxy",
                            "embedded default is up");

            try (MongoClient fast =
                    MongoClients.create(stack.config().tiers().fast().uri())) {
                Date windowStart =
                        Date.from(Instant.now().minus(Duration.ofDays(30)).plusSeconds(60));
                long inWindow = orders.countDocuments(Filters.gte(SampleData.AGE_FIELD, windowStart));
                assertThat(inWindow).isBetween(150L, 180L);
                await().atMost(Duration.ofSeconds(30))
                        .untilAsserted(() -> assertThat(fast.getDatabase(SampleData.DATABASE)
                                        .getCollection(SampleData.COLLECTION)
                                        .countDocuments(Filters.gte(SampleData.AGE_FIELD, windowStart)))
                                .isEqualTo(inWindow));
                // once the warmer has covered the window, a read inside it is answered by the fast tier
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(orders.countDocuments(Filters.gte(SampleData.AGE_FIELD, windowStart)))
                            .isEqualTo(inWindow);
                    assertThat(stack.readsServedBy(RoutingMetrics.Served.FAST)).isPositive();
                });
                assertThat(stack.readsServedBy(RoutingMetrics.Served.ARCHIVE))
                        .as("the whole-collection count needs the archive")
                        .isPositive();
                // one /metrics for the whole stack: the proxy's and the tiering workers'
                String metrics = new String(
                        new java.net.URL("http://127.0.0.1:" + stack.httpPort() + "/metrics")
                                .openStream()
                                .readAllBytes(),
                        java.nio.charset.StandardCharsets.UTF_8);
                assertThat(metrics)
                        .contains("thermocline_proxy_commands_total")
                        .contains("thermocline_feeder_events_total")
                        .contains("thermocline_warmer_documents_total")
                        // the archive follower's, named by docs/adoption.md; the mode; the JVM's and the process's
                        .contains(
                                "thermocline_follower_resyncs_total",
                                "thermocline_follower_resyncing",
                                "thermocline_follower_leader",
                                "thermocline_follower_deposed_total")
                        .contains(
                                "thermocline_mode_phase{phase=\"Tiered\"} 1",
                                "thermocline_mode_phase{phase=\"Shadowing\"} 0",
                                "thermocline_mode_epoch")
                        .contains("jvm_memory_used_bytes", "jvm_threads_current", "process_cpu_seconds_total");
            }
        } catch (EmbeddedStack.StartFailure e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void archiveSurvivesARestartAndIsNotReloaded(@TempDir Path dir) throws Exception {
        try (EmbeddedStack stack = EmbeddedStack.start(options(dir, 500), new PrintWriter(new StringWriter()));
                MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + stack.proxyPort() + "/")) {
            client.getDatabase("notes").getCollection("kept").insertOne(new Document("_id", "written-before-restart"));
        }
        StringWriter printed = new StringWriter();
        try (EmbeddedStack stack = EmbeddedStack.start(options(dir, 500), new PrintWriter(printed, true));
                MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + stack.proxyPort() + "/")) {
            assertThat(printed.toString()).doesNotContain("loaded");
            assertThat(client.getDatabase(SampleData.DATABASE)
                            .getCollection(SampleData.COLLECTION)
                            .countDocuments())
                    .isEqualTo(500);
            assertThat(client.getDatabase("notes").getCollection("kept").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void portInUseIsReportedWithTheFix(@TempDir Path dir) throws Exception {
        try (java.net.ServerSocket taken =
                new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            EmbeddedCommand command = new EmbeddedCommand();
            new CommandLine(command)
                    .parseArgs(
                            "--port",
                            String.valueOf(taken.getLocalPort()),
                            "--http",
                            "127.0.0.1:0",
                            "--data-dir",
                            dir.toString(),
                            "--sample-documents",
                            "0",
                            "--status-every",
                            "0s");
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> EmbeddedStack.start(command.options(), new PrintWriter(new StringWriter())))
                    .isInstanceOf(EmbeddedStack.StartFailure.class)
                    .hasMessageContaining("in use")
                    .hasMessageContaining("--port");
        }
    }
}
