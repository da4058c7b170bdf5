package io.thermocline.app;

import static io.thermocline.app.LocalTiers.orders;
import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code thermocline backup-point} against two embedded replica sets: each outcome (reached after waiting for a feeder
 * that was down, timed out with progress, refused on dead letters, refused on a stopped feeder).
 */
@Timeout(180)
class BackupPointCommandTest {

    /** Short, so a stopped feeder's successor takes over within the test. */
    static final Duration LEASE = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    LocalTiers tiers;
    Path config;
    ThermoclineConfig loaded;

    @BeforeEach
    void start() throws Exception {
        tiers = LocalTiers.start(dir);
        config = tiers.config;
        loaded = tiers.loaded();
    }

    @AfterEach
    void stop() {
        tiers.close();
    }

    @Test
    void waitsForADownFeederThenPrintsAnArchiveTimeAfterEveryEarlierWrite() throws Exception {
        try (Feeder first = feeder()) {
            assertThat(first.awaitStreaming(Duration.ofSeconds(30))).isTrue();
        }
        // acknowledged by the fast tier while no feeder runs: only a wait can get them into the archive
        insert(1, 40);
        CompletableFuture<CommandRun> point = CompletableFuture.supplyAsync(() ->
                CommandRun.thermocline("backup-point", "--json", "--timeout", "120", "--config", config.toString()));
        Thread.sleep(2500);
        assertThat(point)
                .as("the feeder is down: the point cannot be reached yet")
                .isNotDone();
        try (Feeder second = feeder()) {
            CommandRun r = point.get();
            assertThat(r.exit()).as("out: %s%nerr: %s", r.out(), r.err()).isZero();
            assertThat(r.err()).contains("backup-point: waiting for the feeder: mirrored through");
            BsonDocument d = BsonDocument.parse(r.out());
            assertThat(r.out()).doesNotContain("$numberLong").doesNotContain("$timestamp");
            assertThat(d.getString("outcome").getValue()).isEqualTo("reached");
            assertThat(orders(tiers.archiveClient).countDocuments())
                    .as("every write acknowledged before the command is in the archive")
                    .isEqualTo(40);
            assertThat(Instant.parse(d.getString("restoreAtOrAfter").getValue()))
                    .isAfter(Instant.parse(d.getString("archiveTimeIso").getValue()));
        }
    }

    @Test
    void timesOutWithProgressWhileTheFeederIsBehind() throws Exception {
        try (Feeder first = feeder()) {
            assertThat(first.awaitStreaming(Duration.ofSeconds(30))).isTrue();
        }
        insert(1, 5);
        CommandRun r = CommandRun.thermocline("backup-point", "--timeout", "2", "--config", config.toString());
        assertThat(r.exit()).as("out: %s%nerr: %s", r.out(), r.err()).isEqualTo(3);
        assertThat(r.err())
                .contains("backup-point: waiting for the feeder: mirrored through")
                .contains("timed out: the feeder is advancing but has not mirrored everything")
                .contains("longer --timeout");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void refusesWhileADeadLetterHoldsADocumentOnlyTheFastTierHas() throws Exception {
        try (Feeder feeder = feeder();
                TierClients clients = TierClients.open(loaded, "test")) {
            assertThat(feeder.awaitStreaming(Duration.ofSeconds(30))).isTrue();
            new DeadLetters(new MetadataStore(clients.fast()))
                    .record(
                            new Namespace("shop", "orders"),
                            new BsonInt32(77),
                            "upsert",
                            11000,
                            "E11000 duplicate key error collection: shop.orders index: sku_1");
            CommandRun r =
                    CommandRun.thermocline("backup-point", "--json", "--timeout", "30", "--config", config.toString());
            assertThat(r.exit()).as("out: %s%nerr: %s", r.out(), r.err()).isEqualTo(1);
            assertThat(r.err())
                    .contains("refused: 1 dead letter(s)")
                    .contains("shop.orders {\"_id\": 77}: upsert failed with code 11000");
            BsonDocument d = BsonDocument.parse(r.out());
            assertThat(d.getString("reason").getValue()).isEqualTo("DEAD_LETTERS");
        }
    }

    @Test
    void refusesAStoppedFeeder() throws Exception {
        try (Feeder first = feeder()) {
            assertThat(first.awaitStreaming(Duration.ofSeconds(30))).isTrue();
        }
        try (TierClients clients = TierClients.open(loaded, "test")) {
            // the last feeder's lease ran out a minute ago and no successor took it
            MetadataStore store = new MetadataStore(clients.fast());
            FeederCheckpoint c = store.feederCheckpoint();
            store.saveFeederCheckpoint(
                    c,
                    new FeederCheckpoint(
                            c.resumeToken(),
                            c.mirroredThrough(),
                            c.openOwnTransaction(),
                            c.mirroredEvents(),
                            c.lagSeconds(),
                            c.pendingEvents(),
                            c.owner(),
                            Instant.now().minusSeconds(60),
                            c.version()));
        }
        insert(1, 3);
        CommandRun r = CommandRun.thermocline("backup-point", "--timeout", "60", "--config", config.toString());
        assertThat(r.exit()).as("out: %s%nerr: %s", r.out(), r.err()).isEqualTo(1);
        assertThat(r.err())
                .contains("refused: the feeder is stopped: the lease of feeder-")
                .contains("Start the feeder");
    }

    private Feeder feeder() {
        return Feeder.start(
                loaded,
                Feeder.Options.defaults().withRegistry(new PrometheusRegistry()).withLeaseDuration(LEASE));
    }

    private void insert(int from, int to) {
        List<Document> docs = new ArrayList<>();
        for (int id = from; id <= to; id++) {
            docs.add(new Document("_id", id).append("createdAt", new Date()));
        }
        orders(tiers.fastClient).insertMany(docs);
    }
}
