package io.thermocline.embeddeddefault;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** The README's command line as the tests run it: ports chosen by the system, the test's data directory, no status line. */
final class LocalStack {
    private LocalStack() {}

    /** The embedded default's options from its command line, with {@code more} arguments after the tests' own. */
    static EmbeddedStack.Options options(Path dir, String... more) {
        List<String> args = new ArrayList<>(
                List.of("--port", "0", "--http", "127.0.0.1:0", "--data-dir", dir.toString(), "--status-every", "0s"));
        args.addAll(List.of(more));
        EmbeddedCommand command = new EmbeddedCommand();
        new CommandLine(command).parseArgs(args.toArray(String[]::new));
        return command.options();
    }
}
