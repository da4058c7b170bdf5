package io.thermocline.app;

import io.thermocline.config.Mode;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.worker.TierClients;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code thermocline mode <shadow|tiered|draining> [--override]}: requests a fleet-wide mode in the mode
 * document; the proxies' controller carries it out (or says in {@code refusal} why not yet).
 */
@Command(
        name = "mode",
        mixinStandardHelpOptions = true,
        description = {
            "Request a mode for the whole fleet: shadow, tiered or draining (docs/adoption.md, docs/removal.md).",
            "Prints the mode document; follow it with thermocline status."
        },
        exitCodeOnInvalidInput = 2)
public final class ModeCommand extends FleetCommand {

    @Parameters(index = "0", paramLabel = "MODE", description = "shadow, tiered or draining")
    Mode mode;

    @Option(names = "--override", description = "Cut over to tiered although the shadow evidence is not in.")
    boolean override;

    @Option(
            names = "--wait",
            paramLabel = "PHASE",
            description = {
                "Wait until the fleet reaches this phase (Shadowing, Tiered, Drained, ...), printing each change of phase or reason.",
                "Exit 1 with the refusal if it does not within --timeout; the request then stays pending (withdraw it by requesting the active mode)."
            })
    String waitFor;

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            defaultValue = "120",
            description = "How long --wait waits (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    public ModeCommand() {
        super("thermocline-cli");
    }

    @Override
    int run(ThermoclineConfig loaded, TierClients clients) {
        ModeDocument d = new ModeStore(new MetadataStore(clients.fast())).request(mode, override, "cli");
        out().println("requested " + mode.configName() + (override ? " (override)" : "") + "; active "
                + d.active().configName() + ", phase " + d.phase().documentName());
        out().flush();
        return waitFor == null ? 0 : await(new ModeStore(new MetadataStore(clients.fast())));
    }

    private int await(ModeStore store) {
        Phase target;
        try {
            target = Phase.parse(waitFor);
        } catch (IllegalArgumentException e) {
            err().println("--wait " + waitFor
                    + ": not a phase; use Shadowing, CuttingOver, Tiered, Draining, Drained or Restoring");
            return 2;
        }
        return awaitPhase(store, target, java.time.Duration.ofSeconds(timeoutSeconds), out(), err());
    }

    /**
     * Waits until the fleet is in {@code target}, printing progress on {@code out}: 0 (and the phase on {@code out}),
     * or 1 with the phase, the refusal and what the pending request will do on {@code err}.
     */
    static int awaitPhase(ModeStore store, Phase target, java.time.Duration timeout, PrintWriter out, PrintWriter err) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        ModeDocument d = store.read();
        String shown = null;
        long shownAt = 0;
        while (true) {
            long now = System.nanoTime();
            String line = progress(d);
            // a line when the fleet moves or its reason changes, and a reminder every 10 s that it is still waiting
            if (!line.equals(shown) || now - shownAt >= PROGRESS_EVERY_NANOS) {
                out.printf("  %3d s: %s%n", (now - start) / 1_000_000_000L, line);
                out.flush();
                shown = line;
                shownAt = now;
            }
            if (d.phase() == target || now >= deadline) {
                break;
            }
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
        err.println(timedOut(target, timeout.toSeconds(), d));
        err.flush();
        return 1;
    }

    private static final long PROGRESS_EVERY_NANOS = 10_000_000_000L;

    static String progress(ModeDocument d) {
        return "phase " + d.phase().documentName() + ", active " + d.active().configName()
                + (d.refusal() == null ? "" : "; waiting: " + d.refusal());
    }

    /**
     * What a timeout leaves: the request stays, and the fleet carries it out once it can (a cutover that
     * has begun cannot be withdrawn halfway from the CLI); the sentence says so and how to withdraw it.
     */
    static String timedOut(Phase target, long timeoutSeconds, ModeDocument d) {
        return "not " + target.documentName() + " after " + timeoutSeconds + " s: phase "
                + d.phase().documentName()
                + (d.refusal() == null ? "" : "; refusal: " + d.refusal())
                + ". The request for " + d.requested().configName()
                + " stays pending: the fleet carries it out when it can,"
                + " without another command. To withdraw it, request the active mode: thermocline mode "
                + d.active().configName();
    }
}
