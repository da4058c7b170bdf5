package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.worker.TierClients;
import java.util.Map;
import picocli.CommandLine.Command;

/** {@code thermocline feeder}: mirrors every fast-tier write to the archive until stopped. */
@Command(
        name = "feeder",
        mixinStandardHelpOptions = true,
        description = {
            "Mirror the fast tier's writes to the archive (change stream, resumable).",
            "Run exactly one; a second one waits for the first one's lease. See docs/tiering-workers.md."
        },
        exitCodeOnInvalidInput = 2)
public final class FeederCommand extends WorkerCommand {

    public FeederCommand() {
        this(System.getenv());
    }

    FeederCommand(Map<String, String> environment) {
        super(environment);
    }

    @Override
    int run(ThermoclineConfig loaded) throws Exception {
        Feeder feeder = Feeder.start(loaded, Feeder.Options.defaults());
        // beside the feeder (one per cluster): keeps the fast tier in step while the archive is authoritative
        // (docs/adoption.md)
        com.mongodb.client.MongoClient followed =
                com.mongodb.client.MongoClients.create(loaded.tiers().archive().uri());
        ArchiveFollower follower = new ArchiveFollower(
                        TierClients.client(loaded.tiers().fast().uri(), "thermocline-follower"),
                        followed,
                        loaded.collections(),
                        loaded.fleet().instanceId(),
                        java.time.Duration.ofMillis(200))
                .start();
        AutoCloseable both = () -> {
            follower.close();
            followed.close();
            feeder.close();
        };
        return runUntilStopped(
                both,
                feeder::running,
                "thermocline feeder running for " + loaded.collections().size() + " tiered collection(s)");
    }
}
