package io.thermocline.app;

import io.thermocline.app.embedded.EmbeddedCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code thermocline} command: one jar, one subcommand per data-plane process. */
@Command(name = "thermocline", mixinStandardHelpOptions = true, versionProvider = Thermocline.Version.class,
        description = "Tiered storage for MongoDB replica sets.",
        subcommands = {ProxyCommand.class, FeederCommand.class, EvictorCommand.class, WarmerCommand.class,
                EmbeddedCommand.class, CommandLine.HelpCommand.class})
public final class Thermocline implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        return new CommandLine(new Thermocline()).setCaseInsensitiveEnumValuesAllowed(true);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Thermocline.class.getPackage().getImplementationVersion();
            return new String[] {"thermocline " + (v == null ? "development build" : v)};
        }
    }
}
