package io.thermocline.embeddeddefault;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The status line of a terminal: one line redrawn in place at the bottom, with every other line written
 * through {@link #logs()} (logback's console appender writes to {@code System.out}) printed above it. Off a
 * terminal the status is a plain line like any other, so a file or pipe gets no control characters.
 */
final class LiveLine {

    /** Carriage return, then erase the line (ANSI EL2). */
    static final String CLEAR = "\r\u001b[2K";

    private final OutputStream terminal;
    private final boolean live;
    private String status;
    private boolean midLine;

    LiveLine(OutputStream terminal, boolean live) {
        this.terminal = terminal;
        this.live = live;
    }

    /** Shows {@code text} as the status: in place on a terminal, as a new line otherwise. */
    synchronized void show(String text) throws IOException {
        if (!live) {
            terminal.write((text + System.lineSeparator()).getBytes(StandardCharsets.UTF_8));
        } else {
            status = text;
            if (!midLine) {
                terminal.write((CLEAR + text).getBytes(StandardCharsets.UTF_8));
            }
        }
        terminal.flush();
    }

    /** Ends the status line for good (the process stops): what follows starts on a line of its own. */
    synchronized void end() throws IOException {
        if (live && status != null && !midLine) {
            terminal.write(System.lineSeparator().getBytes(StandardCharsets.UTF_8));
        }
        status = null;
        terminal.flush();
    }

    /** Where the rest of the process writes: each line goes above the status, which is redrawn after it. */
    OutputStream logs() {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
                synchronized (LiveLine.this) {
                    if (length == 0) {
                        return;
                    }
                    if (live && status != null && !midLine) {
                        terminal.write(CLEAR.getBytes(StandardCharsets.UTF_8));
                    }
                    terminal.write(bytes, offset, length);
                    midLine = bytes[offset + length - 1] != '\n';
                    if (live && status != null && !midLine) {
                        terminal.write((CLEAR + status).getBytes(StandardCharsets.UTF_8));
                    }
                }
            }

            @Override
            public void flush() throws IOException {
                terminal.flush();
            }
        };
    }
}
