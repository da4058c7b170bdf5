package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The help of {@code thermocline} and of each subcommand, as users read it, pinned in
 * {@code help/thermocline.txt}: every option's name, label, default and description. A change to
 * the command line shows here as a diff, so a refactoring of the commands cannot change it unseen.
 */
class HelpTextTest {

    @Test
    void everyCommandsHelpIsAsPinned() throws IOException {
        assertThat(helpOfEveryCommand()).isEqualTo(pinned());
    }

    static String helpOfEveryCommand() {
        CommandLine thermocline = Thermocline.commandLine();
        StringBuilder help = new StringBuilder(thermocline.getUsageMessage(CommandLine.Help.Ansi.OFF));
        thermocline
                .getSubcommands()
                .forEach((name, command) -> help.append("\n=== thermocline ")
                        .append(name)
                        .append('\n')
                        .append(command.getUsageMessage(CommandLine.Help.Ansi.OFF)));
        return help.toString();
    }

    private static String pinned() throws IOException {
        try (InputStream in = HelpTextTest.class.getResourceAsStream("/help/thermocline.txt")) {
            assertThat(in).as("help/thermocline.txt on the test classpath").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
