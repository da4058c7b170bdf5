package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.http.HttpEndpoint;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.worker.TierClients;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code thermocline feeder}: mirrors every fast-tier write to the archive until stopped. */
@Command(
        name = "feeder",
        mixinStandardHelpOptions = true,
        description = {
            "Mirror the fast tier's writes to the archive (change stream, resumable).",
            "Run exactly one; a second one waits for the first one's lease. See docs/tiering-workers.md."
        },
        exitCodeOnInvalidInput = 2)
public final class FeederCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    final ConfigSource source;

    @Mixin
    final MetricsOption metrics = new MetricsOption();

    public FeederCommand() {
        this(System.getenv());
    }

    FeederCommand(Map<String, String> environment) {
        source = new ConfigSource(environment);
    }

    @Override
    public Integer call() throws Exception {
        ThermoclineConfig loaded = source.load();
        if (loaded == null) {
            return 2;
        }
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
        HttpEndpoint endpoint = metrics.serve(feeder::running);
        spec.commandLine()
                .getOut()
                .println(
                        "thermocline feeder running for " + loaded.collections().size() + " tiered collection(s)");
        spec.commandLine().getOut().flush();
        WorkerRuntime.runUntilStopped(both, endpoint);
        return 0;
    }
}
