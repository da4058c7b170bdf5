package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.http.HttpEndpoint;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.worker.TierClients;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
public final class EvictorCommand implements Callable<Integer> {

    @Option(
            names = "--loop",
            description = "Keep running: a pass every evictor.interval (default: one pass, then exit "
                    + "with 0, or 3 when the feeder was too far behind to finish it).")
    boolean loop;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    final ConfigSource source;

    @Mixin
    final MetricsOption metrics = new MetricsOption();

    public EvictorCommand() {
        this(System.getenv());
    }

    EvictorCommand(Map<String, String> environment) {
        source = new ConfigSource(environment);
    }

    @Override
    public Integer call() throws Exception {
        ThermoclineConfig loaded = source.load();
        if (loaded == null) {
            return 2;
        }
        if (!loop) {
            try (TierClients clients = TierClients.open(loaded, "thermocline-evictor")) {
                Evictor.PassResult result = new Evictor(
                                clients.fast(),
                                clients.archive(),
                                loaded.collections(),
                                loaded.evictor(),
                                Evictor.Options.defaults())
                        .runPass();
                spec.commandLine().getOut().println("thermocline evictor pass: " + result.outcomes());
                return result.complete() ? 0 : 3;
            }
        }
        Evictor evictor = Evictor.start(loaded, Evictor.Options.defaults());
        HttpEndpoint endpoint = metrics.serve(evictor::running);
        spec.commandLine()
                .getOut()
                .println("thermocline evictor running every " + loaded.evictor().interval());
        spec.commandLine().getOut().flush();
        WorkerRuntime.runUntilStopped(evictor, endpoint);
        return 0;
    }
}
