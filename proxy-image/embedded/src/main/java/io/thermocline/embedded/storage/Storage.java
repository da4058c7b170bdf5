package io.thermocline.embedded.storage;

import java.nio.file.Path;

/** Where a replica set keeps its data: lost on close, or in a directory that survives restarts. */
public sealed interface Storage {

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

    record Memory() implements Storage {
    }

    record Directory(Path path, String fileSystem) implements Storage {
        /** The name H2 opens {@code file} in this directory by. */
        public String h2Name(String file) {
            return fileSystem + path.resolve(file);
        }
    }
}
