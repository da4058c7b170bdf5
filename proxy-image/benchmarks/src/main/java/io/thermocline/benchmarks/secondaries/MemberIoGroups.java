package io.thermocline.benchmarks.secondaries;

import io.thermocline.benchmarks.tiering.ArchiveCgroup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A disk-read budget per archive member although the embedded replica set runs its members in one
 * process (its replication is in-process: members cannot run as processes of their own). cgroup v1
 * places threads, not only processes ({@code tasks}), and its blkio throttle charges a read to the
 * thread that issues it; so each member gets a blkio group capped at {@code iops} reads/s, and a
 * placer moves that member's threads into it as they appear: its command threads (where its reads
 * run) and its oplog applier, named {@code archive-m<i>-...} (the kernel keeps 15 characters of a
 * thread name, which still hold the index). Memory (heap and page cache) stays capped for the whole
 * process: v1 charges memory per process. cgroup v2 cannot do this (its io controller is not threaded).
 */
final class MemberIoGroups implements AutoCloseable {
    private static final Path BLKIO = Path.of("/sys/fs/cgroup/blkio");

    private final long pid;
    private final String device;
    private final List<Path> groups = new ArrayList<>();
    private final Thread placer;
    private volatile boolean running = true;
    private volatile int placed;

    MemberIoGroups(long pid, int members, int iops, String device) throws IOException {
        if (!Files.isDirectory(BLKIO)) {
            throw new IOException("per-member disk budgets need cgroup v1's blkio controller at " + BLKIO
                    + " (v2's io controller cannot hold single threads)");
        }
        this.pid = pid;
        this.device = device;
        for (int i = 0; i < members; i++) {
            Path g = BLKIO.resolve("thermocline-archive-m" + i);
            Files.createDirectories(g);
            Files.writeString(g.resolve("blkio.throttle.read_iops_device"), device + " " + iops);
            groups.add(g);
        }
        placer = new Thread(this::placeLoop, "member-io-placer");
        placer.setDaemon(true);
        placer.start();
    }

    /** Threads placed so far (a thread placed twice, e.g. after a restart of the placer, counts twice). */
    int placed() {
        return placed;
    }

    /** Disk reads of member {@code i}'s threads so far. */
    ArchiveCgroup.Reads reads(int i) throws IOException {
        long requests = 0;
        long bytes = 0;
        for (String file : List.of("blkio.throttle.io_serviced", "blkio.throttle.io_service_bytes")) {
            for (String line : Files.readAllLines(groups.get(i).resolve(file))) {
                String[] p = line.split(" ");
                if (p.length == 3 && p[0].equals(device) && p[1].equals("Read")) {
                    if (file.endsWith("serviced")) {
                        requests = Long.parseLong(p[2]);
                    } else {
                        bytes = Long.parseLong(p[2]);
                    }
                }
            }
        }
        return new ArchiveCgroup.Reads(requests, bytes);
    }

    private void placeLoop() {
        List<String> seen = new ArrayList<>();
        while (running) {
            try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                for (Path task : tasks.toList()) {
                    String tid = task.getFileName().toString();
                    if (seen.contains(tid)) {
                        continue;
                    }
                    String name;
                    try {
                        name = Files.readString(task.resolve("comm")).strip();
                    } catch (IOException gone) {
                        continue;
                    }
                    int member = memberOf(name);
                    if (member >= 0 && member < groups.size()) {
                        Files.writeString(groups.get(member).resolve("tasks"), tid);
                        placed++;
                    }
                    seen.add(tid);
                }
                Thread.sleep(100);
            } catch (IOException e) {
                return; // the process ended
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** {@code archive-m1-cmd-} or {@code archive-m1-appl} (truncated names): 1; anything else: -1. */
    static int memberOf(String threadName) {
        if (!threadName.startsWith("archive-m") || threadName.length() < 10 || !Character.isDigit(threadName.charAt(9))) {
            return -1;
        }
        return threadName.charAt(9) - '0';
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        placer.interrupt();
        placer.join(2_000);
        for (Path g : groups) {
            ArchiveCgroup.remove(g);
        }
    }
}
