package io.thermocline.embedded.storage;

import java.nio.file.Path;

/** Where a replica set keeps its data: lost on close, or in a directory that survives restarts. */
public sealed interface Storage {

    static Storage memory() {
        return new Memory();
    }

    static Storage directory(Path path) {
        return new Directory(path);
    }

    record Memory() implements Storage {
    }

    record Directory(Path path) implements Storage {
    }
}
