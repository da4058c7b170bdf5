package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.http.HttpEndpoint;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code thermocline warmer}: copies the archive's documents inside the window into the fast tier. */
@Command(
        name = "warmer",
        mixinStandardHelpOptions = true,
        description = {
            "Copy archive documents inside the window into the fast tier, newest first, resumable.",
            "Exits when every collection is warm (a Job); with --follow keeps re-checking. See docs/tiering-workers.md."
        },
        exitCodeOnInvalidInput = 2)
public final class WarmerCommand implements Callable<Integer> {

    @Option(names = "--follow", description = "Keep running and warm again when a window grows.")
    boolean follow;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    final ConfigSource source;

    @Mixin
    final MetricsOption metrics = new MetricsOption();

    public WarmerCommand() {
        this(System.getenv());
    }

    WarmerCommand(Map<String, String> environment) {
        source = new ConfigSource(environment);
    }

    @Override
    public Integer call() throws Exception {
        ThermoclineConfig loaded = source.load();
        if (loaded == null) {
            return 2;
        }
        if (!follow) {
            try (TierClients clients = TierClients.open(loaded, "thermocline-warmer")) {
                Warmer warmer = new Warmer(
                        clients.fast(),
                        clients.archive(),
                        loaded.collections(),
                        loaded.warmer(),
                        Warmer.Options.defaults());
                while (!warmer.warmAll()) {
                    Thread.sleep(Warmer.Options.defaults().errorBackoff().toMillis());
                }
                spec.commandLine().getOut().println("thermocline warmer: every collection is warm");
                return 0;
            }
        }
        Warmer warmer = Warmer.start(loaded, Warmer.Options.defaults());
        HttpEndpoint endpoint = metrics.serve(warmer::running);
        WorkerRuntime.runUntilStopped(warmer, endpoint);
        return 0;
    }
}
