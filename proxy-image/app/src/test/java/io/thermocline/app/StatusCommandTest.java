package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.Mode;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.mode.FollowerLease;
import io.thermocline.tiering.mode.FollowerResync;
import io.thermocline.tiering.mode.FollowerState;
import io.thermocline.tiering.mode.ModeController;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The archive follower in {@code thermocline status}: whether it runs and who holds its lease, how far behind the
 * archive's latest optime it is, and a running resync with its progress; as text and with {@code --json}, against
 * two embedded replica sets.
 */
@Timeout(120)
class StatusCommandTest {

    static final Instant AT = Instant.parse("2026-12-01T18:00:00Z");

    @TempDir
    Path dir;

    @Test
    void jsonShowsTheLeaseHolderTheLagBehindTheArchiveAndARunningResync() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            Path config = tiers.config;
            ThermoclineConfig loaded = tiers.loaded();
            try (TierClients clients = TierClients.open(loaded, "test")) {
                ModeStore modes = new ModeStore(new MetadataStore(clients.fast()));
                modes.save(
                        ModeDocument.initial(),
                        ModeDocument.initial().entering(Mode.SHADOW, Phase.SHADOWING, Instant.now()));
                // the follower applied the archive up to 30 s before its present, and resyncs
                BsonTimestamp archiveNow = ModeController.archiveTime(clients.archive());
                FollowerState taken = modes.takeFollowerLease("feeder-1", Duration.ofMinutes(5), Instant.now())
                        .orElseThrow();
                modes.saveFollower(
                        null, taken.lease(), taken.restartedAt(new BsonTimestamp(archiveNow.getTime() - 30, 1)));
                Instant started = Instant.now().minusSeconds(60).truncatedTo(ChronoUnit.MILLIS);
                modes.saveFollowerResync(
                        null,
                        taken.lease(),
                        new FollowerResync(2, started, null, "archive change stream history lost (code 286)", 40, 2));

                String json = CommandRun.thermocline("status", "--json", "--config", config.toString())
                        .succeeded();
                assertThat(json)
                        .as("plain JSON, not Extended JSON")
                        .doesNotContain("$date", "$timestamp", "$numberLong", "$oid");
                BsonDocument follower = BsonDocument.parse(json).getDocument("follower");
                assertThat(follower.getBoolean("running").getValue()).isTrue();
                assertThat(follower.getBoolean("follows").getValue()).isTrue();
                assertThat(follower.getString("holder").getValue()).isEqualTo("feeder-1");
                assertThat(follower.getNumber("term").longValue())
                        .isEqualTo(taken.lease().term());
                assertThat(follower.getNumber("lagSeconds").longValue())
                        .as("appliedThrough is 30 s behind the archive's optime")
                        .isBetween(
                                30L, 600L); // plus however long a loaded machine took between the save and the status
                assertThat(follower.getDocument("archiveLatest").getNumber("t").longValue())
                        .isGreaterThanOrEqualTo(archiveNow.getTime());
                BsonDocument resync = follower.getDocument("resync");
                assertThat(resync.get("finishedAt").isNull()).isTrue();
                assertThat(resync.getString("startedAt").getValue())
                        .as("dates are ISO-8601 strings")
                        .isEqualTo(started.toString());
                assertThat(resync.getNumber("copied").longValue()).isEqualTo(40);

                // a clean stop expires the lease at once: the holder is still named, the follower is stopped
                assertThat(modes.renewFollowerLease(taken.lease(), Instant.EPOCH))
                        .isTrue();
                String text = CommandRun.thermocline("status", "--config", config.toString())
                        .succeeded();
                assertThat(text)
                        .contains("follower  STOPPED: the lease of feeder-1 (term "
                                + taken.lease().term() + ") expired at 1970-01-01T00:00:00Z")
                        .contains(" s behind the archive; resync 2 RUNNING since " + started);
                assertThat(BsonDocument.parse(CommandRun.thermocline("status", "--json", "--config", config.toString())
                                        .succeeded())
                                .getDocument("follower")
                                .getBoolean("running")
                                .getValue())
                        .isFalse();
            }
        }
    }

    @Test
    void anArchiveTheFeederCannotWriteToShowsInTheStatus() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            Path config = tiers.config;
            try (TierClients clients = TierClients.open(tiers.loaded(), "test")) {
                MetadataStore metadata = new MetadataStore(clients.fast());
                metadata.ensureCollections();
                metadata.saveFeederHealth(io.thermocline.tiering.metadata.FeederHealth.HEALTHY.withArchiveUnavailable(
                        new io.thermocline.tiering.metadata.FeederHealth.ArchiveUnavailable(
                                "refusing_writes",
                                Instant.parse("2026-12-04T20:00:00Z"),
                                "disk full: archive cannot write to /data")));
                assertThat(CommandRun.thermocline("status", "--config", config.toString())
                                .succeeded())
                        .contains(
                                "ARCHIVE UNAVAILABLE (refusing_writes since 2026-12-04T20:00:00Z): disk full: archive cannot write to /data");
                metadata.saveFeederHealth(io.thermocline.tiering.metadata.FeederHealth.HEALTHY);
                assertThat(CommandRun.thermocline("status", "--config", config.toString())
                                .succeeded())
                        .doesNotContain("ARCHIVE UNAVAILABLE");
            }
        }
    }

    /**
     * Issue 40: an archive that accepts connections and answers {@code hello} but stalls every command held the screen
     * for as long as the archive did (here a minute). Its first question gives up at its deadline (two seconds, sent
     * as maxTimeMS and kept by the client), no other is asked (each would wait as long: before, one per collection and
     * the optime's), and the screen says the archive is not serving and why.
     */
    @Test
    void anArchiveThatStallsItsCommandsDoesNotHoldTheScreen() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            Path config = tiers.config;
            com.mongodb.client.MongoClient admin = tiers.archiveClient;
            try (TierClients clients = TierClients.open(tiers.loaded(), "test")) {
                new MetadataStore(clients.fast()).ensureCollections();
            }
            long enteredBefore = failPoint(
                    admin,
                    new org.bson.Document("mode", "alwaysOn")
                            .append(
                                    "data",
                                    new org.bson.Document(
                                                    "failCommands",
                                                    java.util.List.of("count", "ping", "aggregate", "find"))
                                            .append("blockConnection", true)
                                            .append("blockTimeMS", 60_000)));
            String text;
            BsonDocument json;
            try {
                text = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                        Duration.ofSeconds(30),
                        () -> CommandRun.thermocline("status", "--config", config.toString())
                                .succeeded(),
                        "the status screen waited for the stalled archive");
                json = BsonDocument.parse(org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                        Duration.ofSeconds(30),
                        () -> CommandRun.thermocline("status", "--json", "--config", config.toString())
                                .succeeded(),
                        "the status screen waited for the stalled archive"));
            } finally {
                long enteredDuring = failPoint(admin, new org.bson.Document("mode", "off")) - enteredBefore;
                assertThat(enteredDuring)
                        .as("archive questions the two screens asked the stalled archive: one each, not one per"
                                + " collection and the optime's")
                        .isEqualTo(2);
            }
            assertThat(text)
                    .contains("shop.orders              fast 0, archive unavailable")
                    .contains("archive   NOT SERVING: did not answer the count of shop.orders within 2 s: ");
            BsonDocument archive = json.getDocument("archive");
            assertThat(archive.getBoolean("serving").getValue()).isFalse();
            assertThat(archive.getString("cause").getValue()).startsWith("did not answer the count of shop.orders");
            assertThat(json.getArray("collections")
                            .get(0)
                            .asDocument()
                            .getNumber("archiveDocuments")
                            .longValue())
                    .isEqualTo(-1);
            assertThat(json.getDocument("follower").get("archiveLatest").isNull())
                    .isTrue();
        }
    }

    @Test
    void aServingArchiveIsSaidToServe() throws Exception {
        try (LocalTiers tiers = LocalTiers.start(dir)) {
            try (TierClients clients = TierClients.open(tiers.loaded(), "test")) {
                new MetadataStore(clients.fast()).ensureCollections();
            }
            BsonDocument json =
                    BsonDocument.parse(CommandRun.thermocline("status", "--json", "--config", tiers.config.toString())
                            .succeeded());
            assertThat(json.getDocument("archive").getBoolean("serving").getValue())
                    .isTrue();
            assertThat(json.getDocument("archive").get("cause").isNull()).isTrue();
            assertThat(CommandRun.thermocline("status", "--config", tiers.config.toString())
                            .succeeded())
                    .doesNotContain("NOT SERVING");
        }
    }

    /** Sets the archive's failCommand fail point; returns how many commands it had acted on (mongod's count). */
    private static long failPoint(com.mongodb.client.MongoClient admin, org.bson.Document settings) {
        org.bson.Document command = new org.bson.Document("configureFailPoint", "failCommand");
        command.putAll(settings);
        return admin.getDatabase("admin")
                .runCommand(command)
                .get("count", Number.class)
                .longValue();
    }

    @Test
    void theTextShowsTheDrainOnlyWhileDrainingAndShadowCountersOnlyWhileShadowing() {
        ModeDocument drainedThenTiered = ModeDocument.initial()
                .entering(Mode.DRAINING, Phase.DRAINING, AT)
                .withDrain(new io.thermocline.tiering.mode.DrainProgress(0.5, 3, AT, AT.plusSeconds(5)))
                .entering(Mode.TIERED, Phase.TIERED, AT.plusSeconds(60));
        assertThat(drainedThenTiered.toBson().isDocument("drain"))
                .as("the document keeps the last drain")
                .isTrue();
        String tiered = StatusCommand.text(screen(drainedThenTiered));
        assertThat(tiered).doesNotContain("drain ").doesNotContain("shadow:").contains("shop.orders");
        String shadowing =
                StatusCommand.text(screen(ModeDocument.initial().entering(Mode.SHADOW, Phase.SHADOWING, AT)));
        assertThat(shadowing).contains("shadow: 4 reads").doesNotContain("drain ");
        String draining = StatusCommand.text(
                screen(drainedThenTiered.entering(Mode.DRAINING, Phase.DRAINING, AT.plusSeconds(90))));
        assertThat(draining).contains("drain     lag 0.5 s, 3 unmirrored").doesNotContain("shadow:");
    }

    private static BsonDocument screen(ModeDocument m) {
        BsonDocument mode = m.toBson();
        mode.remove("_id");
        BsonDocument shadow = BsonDocument.parse(
                "{reads: {$numberLong: '4'}, wouldServe: {$numberLong: '2'}, compared: {$numberLong: '4'},"
                        + " agreed: {$numberLong: '4'}, diverged: {$numberLong: '0'}, skipped: {$numberLong: '0'}, samples: []}");
        return new BsonDocument("mode", mode)
                .append("feeder", BsonDocument.parse("{lagSeconds: 0.0, pendingEvents: {$numberLong: '0'}}"))
                .append("follower", StatusCommand.follower(FollowerState.none(), m, null, AT))
                .append(
                        "collections",
                        new org.bson.BsonArray(
                                java.util.List.of(new BsonDocument("namespace", new org.bson.BsonString("shop.orders"))
                                        .append("fastDocuments", new org.bson.BsonInt64(1))
                                        .append("archiveDocuments", new org.bson.BsonInt64(2))
                                        .append("coveredFrom", org.bson.BsonNull.VALUE)
                                        .append("warmed", org.bson.BsonBoolean.TRUE)
                                        .append("shadow", shadow))));
    }

    @Test
    void theLineNamesTheHolderTheLagAndTheResync() {
        FollowerState state = new FollowerState(
                new BsonTimestamp(1, 1),
                null,
                new BsonTimestamp(1796148908, 7),
                Map.of(),
                new FollowerLease("feeder-1", 3, AT.plusSeconds(10)),
                new FollowerResync(2, AT, null, "archive change stream history lost (code 286)", 40, 2));
        ModeDocument shadowing = ModeDocument.initial().entering(Mode.SHADOW, Phase.SHADOWING, AT);
        assertThat(StatusCommand.follower(
                        StatusCommand.follower(state, shadowing, new BsonTimestamp(1796148912, 1), AT)))
                .isEqualTo(
                        "follower  running, held by feeder-1 (term 3), applied through 2026-12-01T18:15:08Z (1796148908.7), 4 s behind"
                                + " the archive; resync 2 RUNNING since 2026-12-01T18:00:00Z: archive change stream history lost (code 286),"
                                + " 40 copied, 2 deleted\n");
    }

    @Test
    void whileCuttingOverTheLagIsToTheCutoverPoint() {
        FollowerState state = new FollowerState(
                new BsonTimestamp(1, 1),
                null,
                new BsonTimestamp(1796148900, 1),
                Map.of(),
                new FollowerLease("feeder-1", 3, AT.plusSeconds(10)),
                null);
        ModeDocument cutting = ModeDocument.initial()
                .entering(Mode.SHADOW, Phase.CUTTING_OVER, AT)
                .withCutoverAt(new BsonTimestamp(1796148910, 1));
        BsonDocument f = StatusCommand.follower(state, cutting, new BsonTimestamp(1796149000, 1), AT);
        assertThat(f.getInt64("lagSeconds").getValue()).isEqualTo(10);
    }

    @Test
    void noFollowerYetSaysSoAndOutsideTheArchivePhasesIsNotAStop() {
        ModeDocument shadowing = ModeDocument.initial().entering(Mode.SHADOW, Phase.SHADOWING, AT);
        assertThat(StatusCommand.follower(StatusCommand.follower(FollowerState.none(), shadowing, null, AT)))
                .isEqualTo(
                        "follower  STOPPED: no feeder process has taken its lease, lag unknown (the archive's optime could not be read)\n");
        assertThat(StatusCommand.follower(
                        StatusCommand.follower(FollowerState.none(), ModeDocument.initial(), null, AT)))
                .isEqualTo("follower  not running: no feeder process has taken its lease"
                        + " (it follows the archive only in Shadowing, CuttingOver and Drained)\n");
    }
}
