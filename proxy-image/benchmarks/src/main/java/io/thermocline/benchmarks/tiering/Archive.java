package io.thermocline.benchmarks.tiering;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.benchmarks.ycsb.ChildProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The archive process ({@link ArchiveMain}) started in a fresh cgroup of its own after the page
 * cache was dropped, so each side of a comparison starts from a cold disk; stopped with its group.
 */
public final class Archive implements AutoCloseable {
    /** One per benchmark process: two benchmarks on one machine would otherwise share (and remove) one group. */
    public static final String GROUP =
            "thermocline-archive-" + ProcessHandle.current().pid();

    /** Memory cap in bytes (0: none), read IOPS cap (0: none), JVM options, oplog entries kept. */
    public record Caps(long memoryBytes, int readIops, List<String> jvm, int oplogEntries) {
        Caps uncapped() {
            return new Caps(0, 0, jvm, oplogEntries);
        }
    }

    private final ChildProcess process;
    private final ArchiveCgroup group;
    final int port;

    private Archive(ChildProcess process, ArchiveCgroup group, int port) {
        this.process = process;
        this.group = group;
        this.port = port;
    }

    /**
     * The JVM's own memory counts against the cgroup's cap with the page cache: glibc's malloc keeps an
     * arena per thread (one per client connection here), and with the default number of arenas the
     * archive's native memory grew past the 256 MB cap in a long run and the kernel killed it (run 10),
     * so it runs with two arenas.
     */
    public static Archive start(Path dir, Caps caps, String device, Path log) throws IOException, InterruptedException {
        dropCaches();
        ArchiveCgroup group = ArchiveCgroup.create(GROUP, caps.memoryBytes(), caps.readIops(), device);
        int port = ChildProcess.freePort();
        try {
            List<String> java = new ArrayList<>(List.of("env", "MALLOC_ARENA_MAX=2"));
            java.addAll(ChildProcess.javaCommand(
                    caps.jvm(),
                    ArchiveMain.class.getName(),
                    List.of(Integer.toString(port), dir.toString(), Integer.toString(caps.oplogEntries()))));
            List<String> command = group.wrap(java);
            return new Archive(ChildProcess.start("archive", command, port, log), group, port);
        } catch (IOException | RuntimeException e) {
            group.close();
            throw e;
        }
    }

    public String uri() {
        return "mongodb://127.0.0.1:" + port + "/?replicaSet=archive";
    }

    public ArchiveCgroup.Reads reads() {
        try {
            return group.reads();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the archive cgroup's counters: " + e.getMessage(), e);
        }
    }

    java.time.Duration cpu() {
        return process.cpu();
    }

    long peakMemory() throws IOException {
        return group.peakMemory();
    }

    long count(String database, String collection) {
        try (MongoClient c = MongoClients.create(uri())) {
            return c.getDatabase(database).getCollection(collection).estimatedDocumentCount();
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        try {
            process.close();
        } finally {
            group.close();
        }
    }

    /** Writes dirty pages out, then drops the page cache (root only). */
    public static void dropCaches() throws IOException, InterruptedException {
        new ProcessBuilder("sync").inheritIO().start().waitFor();
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    }
}
