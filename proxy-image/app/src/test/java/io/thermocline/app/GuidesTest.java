package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * docs/adoption.md and docs/removal.md as scripts: every {@code thermocline} line of their {@code sh} blocks runs, in
 * order, against two embedded replica sets with a proxy, the feeder, the archive follower and the warmer running,
 * and must succeed; between the guides, data written through the proxy must end up in the archive alone.
 */
@Timeout(300)
class GuidesTest {

    @TempDir
    Path dir;

    @Test
    void adoptionThenRemovalGuidesRunAgainstTheEmbeddedStack() throws Exception {
        try (EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder().name("fast").build().start();
             EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().name("archive").build().start();
             MongoClient archiveClient = MongoClients.create(archive.connectionString())) {
            Instant now = Instant.now();
            List<Document> existing = new ArrayList<>();
            for (int id = 1; id <= 50; id++) {
                existing.add(new Document("_id", id).append("createdAt", Date.from(now.minusSeconds(120L * id))));
            }
            archiveClient.getDatabase("shop").getCollection("orders").insertMany(existing);
            Path config = Files.writeString(dir.resolve("thermocline.yaml"), "proxy: {listenHost: 127.0.0.1, port: 0, httpHost: 127.0.0.1, httpPort: 0}\n"
                    + "tiers:\n  archive: {uri: '" + archive.connectionString() + "'}\n  fast: {uri: '" + fast.connectionString() + "'}\n"
                    + "auth: {mode: disabled}\n"
                    + "shadow: {sampleRate: 1, cutoverQuietPeriod: 1s, minComparisons: 0}\n"
                    + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n");
            ThermoclineConfig loaded = ConfigLoader.load(config, Map.of());
            try (ProxyServer proxy = ProxyServer.create(loaded).start();
                 Feeder feeder = Feeder.start(loaded, Feeder.Options.defaults().withRegistry(new PrometheusRegistry()));
                 Warmer warmer = Warmer.start(loaded, Warmer.Options.defaults().withRegistry(new PrometheusRegistry())
                         .withRecheckInterval(Duration.ofMillis(200)));
                 TierClients followerFast = TierClients.open(loaded, "test-follower");
                 MongoClient followed = MongoClients.create(archive.connectionString());
                 ArchiveFollower follower = new ArchiveFollower(followerFast.fast(), followed, loaded.collections(), "guide",
                         Duration.ofMillis(50)).start();
                 MongoClient app = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?retryWrites=true")) {
                assertThat(feeder.awaitStreaming(Duration.ofSeconds(30))).isTrue();
                runGuide(Path.of("../../docs/adoption.md"), config);
                insertAsAnApplicationDoes(app, new Document("_id", 1000).append("createdAt", new Date()));
                runGuide(Path.of("../../docs/removal.md"), config);
                assertThat(archiveClient.getDatabase("shop").getCollection("orders").find(Filters.eq("_id", 1000)).first())
                        .as("written while tiered, in the archive once drained").isNotNull();
                insertAsAnApplicationDoes(app, new Document("_id", 1001).append("createdAt", new Date()));
                assertThat(archiveClient.getDatabase("shop").getCollection("orders").find(Filters.eq("_id", 1001)).first())
                        .as("drained: writes go to the archive directly").isNotNull();
            }
        }
    }

    /**
     * An insert retried while the proxies still finish the switch: the guide's wait ends when the mode
     * document says so, and each proxy refuses writes with a retryable error until its gate has followed.
     */
    private static void insertAsAnApplicationDoes(MongoClient app, Document doc) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                app.getDatabase("shop").getCollection("orders").insertOne(doc);
                return;
            } catch (MongoException e) {
                if (!e.hasErrorLabel("RetryableWriteError") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** Runs each {@code thermocline} line of the guide's {@code sh} blocks, with {@code $CONFIG} set. */
    private static void runGuide(Path guide, Path config) throws Exception {
        boolean inShell = false;
        int ran = 0;
        for (String line : Files.readAllLines(guide)) {
            String trimmed = line.trim();
            if (trimmed.startsWith("```")) {
                inShell = !inShell && trimmed.equals("```sh");
                continue;
            }
            if (!inShell || !trimmed.startsWith("thermocline ")) {
                continue;
            }
            String[] args = trimmed.substring("thermocline ".length()).replace("$CONFIG", config.toString()).split("\\s+");
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cli = Thermocline.commandLine();
            cli.setOut(new PrintWriter(out));
            cli.setErr(new PrintWriter(err));
            int exit = cli.execute(args);
            assertThat(exit).as("%s: %s%nout: %s%nerr: %s", guide.getFileName(), trimmed, out, err).isZero();
            ran++;
        }
        assertThat(ran).as("%s has thermocline steps", guide).isPositive();
    }
}
