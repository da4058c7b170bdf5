package io.thermocline.embedded.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Directories for sets that keep their data on disk only for the life of the process (the suite's on-disk runs):
 * removed when the JVM exits, not when the set closes, since a test may restart a set on the same data.
 */
final class TemporaryDirectories {

    private static final List<Path> CREATED = new ArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(TemporaryDirectories::removeAll, "temporary-storage-cleanup"));
    }

    private TemporaryDirectories() {
    }

    static synchronized Storage create() {
        try {
            Path dir = Files.createTempDirectory("thermocline-set-");
            CREATED.add(dir);
            return Storage.directory(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary storage directory: " + e.getMessage(), e);
        }
    }

    private static synchronized void removeAll() {
        for (Path dir : CREATED) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException | UncheckedIOException e) {
                // best effort at exit: the directory is under the system's temporary directory
            }
        }
    }
}
