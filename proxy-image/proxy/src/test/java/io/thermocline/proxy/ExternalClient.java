package io.thermocline.proxy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A client that is not the Java driver (mongosh, pymongo), run as a process with its output captured. */
public final class ExternalClient {

    /** Exit code and everything the process printed. */
    public record Result(int exit, String output) {
    }

    private ExternalClient() {
    }

    /** Debian's python3 with pymongo (the default python3 on PATH may be another build), or null. */
    public static String pymongoPython() throws IOException, InterruptedException {
        String python = firstExisting(System.getenv("THERMOCLINE_PYTHON"), "/usr/bin/python3");
        return python != null && run(List.of(python, "-c", "import pymongo")).exit() == 0 ? python : null;
    }

    public static Result run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, "timed out: " + new String(out, StandardCharsets.UTF_8));
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    public static String firstExisting(String... paths) {
        for (String p : paths) {
            if (p != null && Files.isExecutable(Path.of(p))) {
                return p;
            }
        }
        return null;
    }
}
