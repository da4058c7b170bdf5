package io.thermocline.benchmarks.tiering;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A cgroup of the archive's own that caps its memory (the JVM and its page cache) and its disk
 * reads per second, and counts the reads it made: cgroup v1 ({@code memory} + {@code blkio}
 * controllers) where they are mounted, else v2 ({@code memory.max}, {@code io.max}). A limit of
 * 0 leaves that resource uncapped (the group still counts). Needs root. {@link #close} removes the
 * group once its processes are gone.
 */
public final class ArchiveCgroup implements AutoCloseable {
    private static final Path ROOT = Path.of("/sys/fs/cgroup");

    /** Reads and bytes read on the capped device, as the kernel counted them for the group. */
    public record Reads(long requests, long bytes) {
        public Reads minus(Reads earlier) {
            return new Reads(requests - earlier.requests, bytes - earlier.bytes);
        }
    }

    private final boolean v1;
    private final List<Path> groups;
    private final String device;

    private ArchiveCgroup(boolean v1, List<Path> groups, String device) {
        this.v1 = v1;
        this.groups = groups;
        this.device = device;
    }

    /** {@code device} is MAJ:MIN of the disk holding the archive's files. */
    public static ArchiveCgroup create(String name, long memoryBytes, int readIops, String device) throws IOException {
        if (Files.isDirectory(ROOT.resolve("memory")) && Files.isDirectory(ROOT.resolve("blkio"))) {
            Path memory = ROOT.resolve("memory").resolve(name);
            Path blkio = ROOT.resolve("blkio").resolve(name);
            Files.createDirectories(memory);
            Files.createDirectories(blkio);
            write(memory.resolve("memory.limit_in_bytes"), memoryBytes > 0 ? Long.toString(memoryBytes) : "-1");
            write(blkio.resolve("blkio.throttle.read_iops_device"), device + " " + Math.max(0, readIops));
            return new ArchiveCgroup(true, List.of(memory, blkio), device);
        }
        Path unified = Files.exists(ROOT.resolve("cgroup.controllers")) ? ROOT : ROOT.resolve("unified");
        write(unified.resolve("cgroup.subtree_control"), "+memory +io");
        Path group = unified.resolve(name);
        Files.createDirectories(group);
        write(group.resolve("memory.max"), memoryBytes > 0 ? Long.toString(memoryBytes) : "max");
        write(group.resolve("io.max"), device + " riops=" + (readIops > 0 ? Integer.toString(readIops) : "max"));
        return new ArchiveCgroup(false, List.of(group), device);
    }

    /** {@code command} started inside the group, from its first instruction on (so all its memory is charged here). */
    public List<String> wrap(List<String> command) {
        StringBuilder join = new StringBuilder();
        for (Path g : groups) {
            join.append("echo $$ > ").append(g.resolve("cgroup.procs")).append(" && ");
        }
        List<String> wrapped = new ArrayList<>(List.of("sh", "-c", join + "exec \"$@\"", "sh"));
        wrapped.addAll(command);
        return wrapped;
    }

    public Reads reads() throws IOException {
        long requests = 0;
        long bytes = 0;
        if (v1) {
            requests = v1Read(groups.get(1).resolve("blkio.throttle.io_serviced"));
            bytes = v1Read(groups.get(1).resolve("blkio.throttle.io_service_bytes"));
        } else {
            for (String line : Files.readAllLines(groups.get(0).resolve("io.stat"))) {
                if (line.startsWith(device + " ")) {
                    for (String kv : line.split(" ")) {
                        if (kv.startsWith("rios=")) {
                            requests = Long.parseLong(kv.substring(5));
                        } else if (kv.startsWith("rbytes=")) {
                            bytes = Long.parseLong(kv.substring(7));
                        }
                    }
                }
            }
        }
        return new Reads(requests, bytes);
    }

    /** The most memory the group held (heap, page cache and all), in bytes. */
    public long peakMemory() throws IOException {
        Path file = v1 ? groups.get(0).resolve("memory.max_usage_in_bytes") : groups.get(0).resolve("memory.peak");
        return Files.exists(file) ? Long.parseLong(Files.readString(file).trim()) : -1;
    }

    private long v1Read(Path file) throws IOException {
        for (String line : Files.readAllLines(file)) {
            String[] parts = line.split(" ");
            if (parts.length == 3 && parts[0].equals(device) && parts[1].equals("Read")) {
                return Long.parseLong(parts[2]);
            }
        }
        return 0;
    }

    private static void write(Path file, String value) throws IOException {
        Files.writeString(file, value);
    }

    /** Removes the group; its processes must have exited. */
    @Override
    public void close() throws IOException, InterruptedException {
        for (Path g : groups) {
            remove(g);
        }
    }

    /** Removes one cgroup directory, waiting up to 5 s for the kernel to let its exited tasks go. */
    public static void remove(Path group) throws InterruptedException {
        for (int attempt = 0; attempt < 50 && Files.exists(group); attempt++) {
            try {
                Files.delete(group);
            } catch (IOException busy) {
                Thread.sleep(100);
            }
        }
    }

    /** MAJ:MIN of the block device that holds {@code path}, from /proc/self/mountinfo. */
    public static String deviceOf(Path path) throws IOException {
        Path real = path.toRealPath();
        String best = null;
        int bestLength = -1;
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] f = line.split(" ");
            String mountPoint = f[4];
            if (real.startsWith(mountPoint) && mountPoint.length() > bestLength) {
                best = f[2];
                bestLength = mountPoint.length();
            }
        }
        if (best == null) {
            throw new IOException("no mount holds " + real + "; pass device=MAJ:MIN");
        }
        return best;
    }
}
