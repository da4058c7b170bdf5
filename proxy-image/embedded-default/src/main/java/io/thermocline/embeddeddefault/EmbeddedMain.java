package io.thermocline.embeddeddefault;

import io.thermocline.app.Thermocline;
import picocli.CommandLine;

/**
 * The demo jar's entry point ({@code thermocline-embedded.jar}): the {@code thermocline}
 * command with its production subcommands and {@code embedded} besides, which only this jar
 * carries (it brings an in-process MongoDB server and H2 that the production image leaves out).
 */
public final class EmbeddedMain {

    private EmbeddedMain() {
    }

    public static void main(String[] args) {
        Thermocline.exitOnBadLogSettings();
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        return Thermocline.commandLine().addSubcommand(new EmbeddedCommand());
    }
}
