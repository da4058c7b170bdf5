package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.util.Map;
import picocli.CommandLine.Command;
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
public final class WarmerCommand extends WorkerCommand {

    @Option(names = "--follow", description = "Keep running and warm again when a window grows.")
    boolean follow;

    public WarmerCommand() {
        this(System.getenv());
    }

    WarmerCommand(Map<String, String> environment) {
        super(environment);
    }

    @Override
    int run(ThermoclineConfig loaded) throws Exception {
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
                out().println("thermocline warmer: every collection is warm");
                return 0;
            }
        }
        Warmer warmer = Warmer.start(loaded, Warmer.Options.defaults());
        return runUntilStopped(warmer, warmer::running, null);
    }
}
