package io.thermocline.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One run of the {@code thermocline} command line as a shell sees it: the exit code, stdout (trimmed) and stderr. */
record CommandRun(int exit, String out, String err) {

    static CommandRun thermocline(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = Thermocline.commandLine();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int exit = cli.execute(args);
        return new CommandRun(exit, out.toString().trim(), err.toString());
    }

    /** Its stdout, once it exited 0 (else the test fails with both outputs). */
    String succeeded() {
        assertThat(exit).as("out: %s%nerr: %s", out, err).isZero();
        return out;
    }
}
