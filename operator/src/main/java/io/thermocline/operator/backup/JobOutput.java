package io.thermocline.operator.backup;

/** What of a Job's output goes into a status message: its last lines, bounded (a condition message is one sentence). */
final class JobOutput {

    private static final int MAX = 400;

    private JobOutput() {}

    static String lastLines(String output) {
        String[] lines = output.strip().split("\n");
        StringBuilder tail = new StringBuilder();
        for (int i = lines.length - 1; i >= 0 && tail.length() < MAX; i--) {
            String line = lines[i].strip();
            if (!line.isEmpty()) {
                tail.insert(0, tail.isEmpty() ? line : line + " | ");
            }
        }
        return tail.length() > MAX ? "..." + tail.substring(tail.length() - MAX) : tail.toString();
    }
}
