package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Filters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

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
        try (LocalTiers tiers =
                LocalTiers.start(dir, "shadow: {sampleRate: 1, cutoverQuietPeriod: 1s, minComparisons: 0}\n")) {
            Instant now = Instant.now();
            List<Document> existing = new ArrayList<>();
            for (int id = 1; id <= 50; id++) {
                existing.add(new Document("_id", id).append("createdAt", Date.from(now.minusSeconds(120L * id))));
            }
            LocalTiers.orders(tiers.archiveClient).insertMany(existing);
            try (LocalTiers.DataPlane plane = tiers.startDataPlane("guide");
                    MongoClient app = plane.application("retryWrites=true")) {
                assertThat(plane.feeder.awaitStreaming(Duration.ofSeconds(30))).isTrue();
                runGuide(Path.of("../../docs/adoption.md"), tiers.config);
                insertAsAnApplicationDoes(app, new Document("_id", 1000).append("createdAt", new Date()));
                runGuide(Path.of("../../docs/removal.md"), tiers.config);
                assertThat(LocalTiers.orders(tiers.archiveClient)
                                .find(Filters.eq("_id", 1000))
                                .first())
                        .as("written while tiered, in the archive once drained")
                        .isNotNull();
                insertAsAnApplicationDoes(app, new Document("_id", 1001).append("createdAt", new Date()));
                assertThat(LocalTiers.orders(tiers.archiveClient)
                                .find(Filters.eq("_id", 1001))
                                .first())
                        .as("drained: writes go to the archive directly")
                        .isNotNull();
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
            String[] args = trimmed.substring("thermocline ".length())
                    .replace("$CONFIG", config.toString())
                    .split("\\s+");
            CommandRun run = CommandRun.thermocline(args);
            assertThat(run.exit())
                    .as("%s: %s%nout: %s%nerr: %s", guide.getFileName(), trimmed, run.out(), run.err())
                    .isZero();
            ran++;
        }
        assertThat(ran).as("%s has thermocline steps", guide).isPositive();
    }
}
