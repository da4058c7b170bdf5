package io.thermocline.embeddeddefault;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The embedded default's status line: redrawn in place under the logs on a terminal, plain lines elsewhere. */
class LiveLineTest {

    private static final String CLEAR = LiveLine.CLEAR;

    @Test
    void onATerminalTheStatusIsRedrawnInPlaceAndLogLinesGoAboveIt() throws Exception {
        ByteArrayOutputStream screen = new ByteArrayOutputStream();
        LiveLine line = new LiveLine(screen, true);
        OutputStream logs = line.logs();
        line.show("docs: 1");
        line.show("docs: 2");
        logs.write("WARN event=x\n".getBytes(StandardCharsets.UTF_8));
        line.show("docs: 3");
        line.end();
        assertThat(screen.toString(StandardCharsets.UTF_8)).isEqualTo(
                CLEAR + "docs: 1" + CLEAR + "docs: 2"
                        + CLEAR + "WARN event=x\n" + CLEAR + "docs: 2"
                        + CLEAR + "docs: 3" + System.lineSeparator());
    }

    @Test
    void aLogLineWrittenInPiecesIsNotCutByTheStatus() throws Exception {
        ByteArrayOutputStream screen = new ByteArrayOutputStream();
        LiveLine line = new LiveLine(screen, true);
        line.show("s1");
        line.logs().write("half ".getBytes(StandardCharsets.UTF_8));
        line.show("s2"); // not drawn in the middle of the log line
        line.logs().write("done\n".getBytes(StandardCharsets.UTF_8));
        assertThat(screen.toString(StandardCharsets.UTF_8)).isEqualTo(CLEAR + "s1" + CLEAR + "half done\n" + CLEAR + "s2");
    }

    @Test
    void offATerminalEachStatusIsAPlainLine() throws Exception {
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        LiveLine line = new LiveLine(file, false);
        line.show("docs: 1");
        line.logs().write("INFO event=y\n".getBytes(StandardCharsets.UTF_8));
        line.show("docs: 2");
        line.end();
        String n = System.lineSeparator();
        assertThat(file.toString(StandardCharsets.UTF_8)).isEqualTo("docs: 1" + n + "INFO event=y\n" + "docs: 2" + n).doesNotContain("\r");
    }
}
