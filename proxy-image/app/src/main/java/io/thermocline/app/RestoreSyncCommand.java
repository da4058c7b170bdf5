package io.thermocline.app;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.Mode;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.backup.RestoreSync;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.worker.TierClients;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code thermocline restore-sync [--hold | --cancel] [--cutover]}: puts the deployment back in step with an
 * archive restored from a backup (docs/backup.md). {@code --hold} before the archive is restored (tiered
 * collections refused, feeder held), then the plain command after it (fast tier and tiering metadata reset,
 * feeder from the present, the archive answering everything in Drained); {@code --cutover} then waits for the
 * warmer and cuts over to tiered.
 */
@Command(
        name = "restore-sync",
        mixinStandardHelpOptions = true,
        description = {
            "Put the deployment back in step with a restored archive (docs/backup.md).",
            "  restore-sync --hold   BEFORE restoring the archive: tiered collections refused (retryably), the feeder held",
            "  restore-sync          AFTER restoring it: fast tier and tiering metadata reset, feeder from the present, phase Drained",
            "  restore-sync --cancel give up a hold before the archive was touched (back to Tiered)"
        },
        exitCodeOnInvalidInput = 2)
public final class RestoreSyncCommand extends FleetCommand {

    @Option(names = "--hold", description = "Before restoring the archive: stop the tiers and the feeder.")
    boolean hold;

    @Option(names = "--cancel", description = "Give up a hold before the archive was restored.")
    boolean cancel;

    @Option(
            names = "--cutover",
            description =
                    "After the reset: wait until the warmer has filled every tiered collection, then cut over to tiered.")
    boolean cutover;

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            defaultValue = "600",
            description = "How long each wait lasts (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    public RestoreSyncCommand() {
        super("thermocline-restore-sync");
    }

    @Override
    Integer refuseOptions() {
        if (hold && cancel) {
            err().println("restore-sync: --hold and --cancel exclude each other");
            return 2;
        }
        return null;
    }

    @Override
    int run(ThermoclineConfig loaded, TierClients clients) throws InterruptedException {
        PrintWriter out = out();
        PrintWriter err = err();
        try {
            RestoreSync restore = new RestoreSync(
                    clients.fast(), clients.archive(), loaded.collections(), Clock.systemUTC(), line -> {
                        out.println("restore-sync: " + line);
                        out.flush();
                    });
            Duration timeout = Duration.ofSeconds(timeoutSeconds);
            if (hold) {
                restore.hold(timeout);
                return 0;
            }
            if (cancel) {
                restore.cancel();
                return 0;
            }
            RestoreSync.Result result = restore.resync();
            out.println("restore-sync: done (" + result.fastDocumentsDeleted()
                    + " fast-tier documents deleted); next: run the warmer"
                    + " (thermocline warmer), then thermocline mode tiered --wait Tiered"
                    + (cutover ? " (doing it: --cutover)" : ""));
            out.flush();
            return cutover ? cutOver(clients, loaded, timeout, out, err) : 0;
        } catch (RestoreSync.Refusal refusal) {
            err.println("restore-sync: refused: " + refusal.getMessage());
            err.flush();
            return 1;
        }
    }

    /** Waits until every tiered collection is warm, then requests tiered and waits for the cutover. */
    private static int cutOver(
            TierClients clients, ThermoclineConfig loaded, Duration timeout, PrintWriter out, PrintWriter err)
            throws InterruptedException {
        MetadataStore metadata = new MetadataStore(clients.fast());
        ModeStore modes = new ModeStore(metadata);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!warm(metadata, loaded)) {
            if (System.nanoTime() > deadline) {
                err.println(
                        "restore-sync: the warmer has not filled every tiered collection within " + timeout.toSeconds()
                                + " s (is it running? thermocline warmer): the fleet stays Drained, the archive answering everything");
                return 1;
            }
            Thread.sleep(200);
        }
        out.println("restore-sync: every tiered collection is warm; requesting tiered");
        out.flush();
        modes.request(Mode.TIERED, false, RestoreSync.HOLDER);
        return ModeCommand.awaitPhase(
                modes, Phase.TIERED, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), out, err);
    }

    private static boolean warm(MetadataStore metadata, ThermoclineConfig loaded) {
        for (CollectionPolicy p : loaded.collections()) {
            NamespaceState s = metadata.namespace(p.namespace());
            if (s.warmer() == null || !s.warmer().complete()) {
                return false;
            }
        }
        return true;
    }
}
