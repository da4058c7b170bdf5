package io.thermocline.benchmarks.tiering;

import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.storage.Storage;

import java.nio.file.Path;
import java.util.List;

/**
 * The benchmark's archive as a process of its own, so that a cgroup can cap its memory (heap and
 * page cache) and its disk reads: one embedded replica set member named {@code archive} on the H2
 * MVStore backend in {@code dir}. {@code ArchiveMain <port[,port...]> <dir> <oplogEntries>}: one member per
 * port (the secondary-reads benchmark runs three; their threads are named {@code archive-m<i>-...}).
 *
 * <p>The oplog is kept short: the embedded set holds it in the heap, and a capped archive has
 * little heap to spare.
 */
public final class ArchiveMain {
    private ArchiveMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        List<Integer> ports = java.util.Arrays.stream(args[0].split(",")).map(Integer::parseInt).toList();
        EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().name("archive").members(ports.size())
                .storage(Storage.directory(Path.of(args[1]))).ports(ports)
                .oplogSize(Integer.parseInt(args[2])).build().start();
        Runtime.getRuntime().addShutdownHook(new Thread(archive::close));
        System.out.println("archive listening on " + archive.connectionString());
        Thread.currentThread().join();
    }
}
