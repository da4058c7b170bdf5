package io.thermocline.app;

import io.thermocline.config.Mode;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code thermocline mode <shadow|tiered|draining> [--override]}: requests a fleet-wide mode in the mode
 * document; the proxies' controller carries it out (or says in {@code refusal} why not yet).
 */
@Command(name = "mode", mixinStandardHelpOptions = true,
        description = {"Request a mode for the whole fleet: shadow, tiered or draining (docs/adoption.md, docs/removal.md).",
                "Prints the mode document; follow it with thermocline status."},
        exitCodeOnInvalidInput = 2)
public final class ModeCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "MODE", description = "shadow, tiered or draining")
    Mode mode;

    @Option(names = "--override", description = "Cut over to tiered although the shadow evidence is not in.")
    boolean override;

    @Option(names = "--wait", paramLabel = "PHASE",
            description = "Wait until the fleet reaches this phase (Shadowing, Tiered, Drained, ...); exit 1 with the refusal if it does not within --timeout.")
    String waitFor;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "120", description = "How long --wait waits (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Option(names = "--config", paramLabel = "FILE", description = "Config file (YAML or JSON), as for the proxy.")
    Path config;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final Map<String, String> environment;

    public ModeCommand() {
        this(System.getenv());
    }

    ModeCommand(Map<String, String> environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() {
        ThermoclineConfig loaded = WorkerRuntime.load("mode", config, environment, spec.commandLine().getErr());
        if (loaded == null) {
            return 2;
        }
        try (TierClients clients = TierClients.open(loaded, "thermocline-cli")) {
            ModeDocument d = new ModeStore(new MetadataStore(clients.fast())).request(mode, override, "cli");
            spec.commandLine().getOut().println("requested " + mode.configName() + (override ? " (override)" : "")
                    + "; active " + d.active().configName() + ", phase " + d.phase().documentName());
            spec.commandLine().getOut().flush();
            return waitFor == null ? 0 : await(new ModeStore(new MetadataStore(clients.fast())));
        }
    }

    private int await(ModeStore store) {
        Phase target;
        try {
            target = Phase.parse(waitFor);
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("--wait " + waitFor + ": not a phase; use Shadowing, CuttingOver, Tiered, Draining, Drained or Restoring");
            return 2;
        }
        return awaitPhase(store, target, java.time.Duration.ofSeconds(timeoutSeconds), spec.commandLine().getOut(), spec.commandLine().getErr());
    }

    /** Waits until the fleet is in {@code target}: 0 (and the phase on {@code out}), or 1 with the phase and refusal on {@code err}. */
    static int awaitPhase(ModeStore store, Phase target, java.time.Duration timeout, java.io.PrintWriter out, java.io.PrintWriter err) {
        long deadline = System.nanoTime() + timeout.toNanos();
        ModeDocument d = store.read();
        while (d.phase() != target && System.nanoTime() < deadline) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 1;
            }
            d = store.read();
        }
        if (d.phase() == target) {
            out.println("phase " + target.documentName());
            out.flush();
            return 0;
        }
        err.println("not " + target.documentName() + " after " + timeout.toSeconds() + " s: phase "
                + d.phase().documentName() + (d.refusal() == null ? "" : "; refusal: " + d.refusal()));
        err.flush();
        return 1;
    }
}
