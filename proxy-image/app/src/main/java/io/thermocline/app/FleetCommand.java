package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.worker.TierClients;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What the commands that act on a running deployment through its two tiers share (status, mode, backup-point,
 * restore-sync): the config ({@link ConfigSource}), the tiers' clients for one run, and the command's output.
 */
abstract class FleetCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    final ConfigSource source = new ConfigSource();

    /** The name the command's clients give the tiers (their logs and {@code currentOp} show it). */
    private final String clientName;

    FleetCommand(String clientName) {
        this.clientName = clientName;
    }

    @Override
    public final Integer call() throws Exception {
        Integer refused = refuseOptions();
        if (refused != null) {
            return refused;
        }
        ThermoclineConfig loaded = source.load();
        if (loaded == null) {
            return 2;
        }
        try (TierClients clients = TierClients.open(loaded, clientName)) {
            return run(loaded, clients);
        }
    }

    /** Before the config is read: an exit code for options that cannot go together, or null. */
    Integer refuseOptions() {
        return null;
    }

    /** The command's work on a valid config with both tiers' clients; its exit code. */
    abstract int run(ThermoclineConfig loaded, TierClients clients) throws Exception;

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }
}
