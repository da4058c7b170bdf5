package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.worker.TierClients;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code thermocline evictor}: removes documents older than the window from the fast tier. */
@Command(
        name = "evictor",
        mixinStandardHelpOptions = true,
        description = {
            "Delete from the fast tier what is older than the window and confirmed in the archive.",
            "Never writes the archive. By default one pass, then exit (the operator runs it as a CronJob);",
            "with --loop, a pass every evictor.interval until stopped. See docs/tiering-workers.md."
        },
        exitCodeOnInvalidInput = 2)
public final class EvictorCommand extends WorkerCommand {

    @Option(
            names = "--loop",
            description = "Keep running: a pass every evictor.interval (default: one pass, then exit "
                    + "with 0, or 3 when the feeder was too far behind to finish it).")
    boolean loop;

    public EvictorCommand() {
        this(System.getenv());
    }

    EvictorCommand(Map<String, String> environment) {
        super(environment);
    }

    @Override
    int run(ThermoclineConfig loaded) throws Exception {
        if (!loop) {
            try (TierClients clients = TierClients.open(loaded, "thermocline-evictor")) {
                Evictor.PassResult result = new Evictor(
                                clients.fast(),
                                clients.archive(),
                                loaded.collections(),
                                loaded.evictor(),
                                Evictor.Options.defaults())
                        .runPass();
                out().println("thermocline evictor pass: " + result.outcomes());
                return result.complete() ? 0 : 3;
            }
        }
        Evictor evictor = Evictor.start(loaded, Evictor.Options.defaults());
        return runUntilStopped(
                evictor,
                evictor::running,
                "thermocline evictor running every " + loaded.evictor().interval());
    }
}
