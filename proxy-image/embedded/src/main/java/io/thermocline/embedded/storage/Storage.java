package io.thermocline.embedded.storage;

import java.nio.file.Path;

/** Where a replica set keeps its data: lost on close, or in a directory that survives restarts. */
public sealed interface Storage {

    /**
     * The system property choosing the engine of sets built without a storage: {@code memory} (the default) or
     * {@code disk}, a fresh directory per set. The suite runs its behaviour tests on both, since users run the
     * on-disk engine (the embedded default) and the two engines have differed.
     */
    String ENGINE_PROPERTY = "thermocline.embedded.storage";

    /** The storage for a set built without one: see {@link #ENGINE_PROPERTY}. */
    static Storage unspecified() {
        String engine = System.getProperty(ENGINE_PROPERTY, "memory");
        return switch (engine) {
            case "memory" -> memory();
            case "disk" -> TemporaryDirectories.create();
            default -> throw new IllegalArgumentException(ENGINE_PROPERTY + "=" + engine + ": use memory or disk");
        };
    }

    static Storage memory() {
        return new Memory();
    }

    static Storage directory(Path path) {
        return new Directory(path, "");
    }

    /** In {@code path}, through an H2 file system ({@code "prefix:"}: tests simulate a full disk with one). */
    static Storage directory(Path path, String fileSystem) {
        return new Directory(path, fileSystem);
    }

    record Memory() implements Storage {}

    record Directory(Path path, String fileSystem) implements Storage {
        /**
         * The name H2 opens {@code file} in this directory by: through H2's {@code retry:} file system, which reopens
         * the file when an interrupted thread's read or write closed it (a Java file channel closes itself then). A
         * stop interrupts the commands still running; without it the first one inside H2's I/O closed the store's file
         * and the stop's own close could not write it ("storeCloseFailed", StopDuringACommandTest).
         */
        public String h2Name(String file) {
            return "retry:" + fileSystem + path.resolve(file);
        }
    }
}
