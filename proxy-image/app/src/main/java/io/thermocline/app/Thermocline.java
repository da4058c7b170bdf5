package io.thermocline.app;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code thermocline} command: one jar, one subcommand per data-plane process. The demo's
 * {@code embedded} subcommand lives in its own jar (module embedded-default), added to this one.
 */
@Command(
        name = "thermocline",
        mixinStandardHelpOptions = true,
        versionProvider = Thermocline.Version.class,
        description = "Tiered storage for MongoDB replica sets.",
        subcommands = {
            ProxyCommand.class,
            FeederCommand.class,
            EvictorCommand.class,
            WarmerCommand.class,
            StatusCommand.class,
            ModeCommand.class,
            BackupPointCommand.class,
            RestoreSyncCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Thermocline implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("embedded")) {
            // the demo moved out of the production jar: say where it is rather than "unmatched argument"
            System.err.println(
                    "thermocline embedded: the demo is in its own jar: java -jar "
                            + "proxy-image/embedded-default/target/thermocline-embedded.jar embedded (see docs/embedded-default.md)");
            System.exit(2);
        }
        exitOnBadLogSettings();
        System.exit(commandLine().execute(args));
    }

    /** Before the first logger: an unknown format would leave the process silent, not merely plain. */
    public static void exitOnBadLogSettings() {
        io.thermocline.app.logging.LogFormat.problem(System.getenv()).ifPresent(problem -> {
            System.err.println("thermocline: " + problem);
            System.exit(2);
        });
    }

    public static CommandLine commandLine() {
        return new CommandLine(new Thermocline()).setCaseInsensitiveEnumValuesAllowed(true);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The release the images are tagged with; between releases, also the Maven version it was built from. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties version = new Properties();
            try (InputStream in = Thermocline.class.getResourceAsStream("version.properties")) {
                if (in == null) {
                    return new String[] {"thermocline development build"};
                }
                version.load(in);
            }
            String release = version.getProperty("release");
            String build = version.getProperty("build");
            return new String[] {"thermocline " + release + (release.equals(build) ? "" : " (built from " + build + ")")
            };
        }
    }
}
