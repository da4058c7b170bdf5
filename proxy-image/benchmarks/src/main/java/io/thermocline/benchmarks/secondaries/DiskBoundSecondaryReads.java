package io.thermocline.benchmarks.secondaries;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.benchmarks.GeneratedSection;
import io.thermocline.benchmarks.ModuleClasses;
import io.thermocline.benchmarks.tiering.Archive;
import io.thermocline.benchmarks.tiering.ArchiveCgroup;
import io.thermocline.benchmarks.tiering.ArchiveMain;
import io.thermocline.benchmarks.ycsb.ChildProcess;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.worker.TierClients;
import org.HdrHistogram.Histogram;
import org.bson.Document;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Archive-routed point reads through Thermocline with {@code secondaryReads: offload} off and on, against
 * the tiering benchmark's disk-bound archive ({@link ArchiveMain} on H2 files, memory capped by cgroup)
 * with three members, each with a disk-read budget of its own ({@link MemberIoGroups}). Each side starts
 * the archive afresh after the page cache is dropped. Thermocline (fast tier in memory, feeder, proxy) and
 * the clients run in this JVM. Root and cgroup v1 needed. Writes its section of
 * docs/benchmarks/secondary-reads.md.
 *
 * <p>Arguments ({@code key=value}, all optional): {@code dir}, {@code records}, {@code memory} (MB, the
 * archive process), {@code iops} (per member), {@code archiveJvm}, {@code threads} (list), {@code warmup},
 * {@code seconds}, {@code out}, {@code device}. Run with CPU priority:
 * {@code BENCH_MAIN=io.thermocline.benchmarks.secondaries.DiskBoundSecondaryReads proxy-image/benchmarks/run-tiering.sh records=150000}
 */
public final class DiskBoundSecondaryReads {
    private static final String DB = "bench";
    private static final String COLLECTION = "items";
    private static final int MEMBERS = 3;
    private static final int FIELDS = 10;
    private static final int FIELD_BYTES = 100;
    /** Every record is older than this, and the hot window is 1 day: every read is the archive's. */
    private static final Duration AGE = Duration.ofDays(30);

    private DiskBoundSecondaryReads() {
    }

    record Settings(Path dir, long records, long memoryMb, int iops, List<String> archiveJvm, List<Integer> threads,
                    int warmup, int seconds, Path out, String device) {
    }

    record Cell(String policy, int threads, double opsPerSecond, Histogram latency, double secondaryShare,
                double[] memberReadsPerSecond, String primary, long errors) {
    }

    public static void main(String[] args) throws Exception {
        ModuleClasses.require();
        Map<String, String> o = BenchmarkArgs.parse(args);
        Path dir = Path.of(o.getOrDefault("dir", "/var/tmp/thermocline-secondary-reads"));
        Files.createDirectories(dir);
        Settings s = new Settings(dir, Long.parseLong(o.getOrDefault("records", "150000")),
                Long.parseLong(o.getOrDefault("memory", "320")), Integer.parseInt(o.getOrDefault("iops", "300")),
                List.of(o.getOrDefault("archiveJvm", "-Xmx160m -XX:MaxDirectMemorySize=32m -XX:+UseSerialGC -Xss512k").split("\\s+")),
                Arrays.stream(o.getOrDefault("threads", "16,64").split(",")).map(Integer::parseInt).toList(),
                Integer.parseInt(o.getOrDefault("warmup", "10")), Integer.parseInt(o.getOrDefault("seconds", "30")),
                Path.of(o.getOrDefault("out", "docs/benchmarks/secondary-reads.md")),
                o.containsKey("device") ? o.get("device") : ArchiveCgroup.deviceOf(dir));
        Path logs = Files.createTempDirectory("thermocline-secondary-reads");
        System.out.println("logs in " + logs + ", archive data in " + dir + " on " + s.device());
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).strip();
        double loadRate = load(s, logs);
        long dataBytes = dataBytes(dir);
        List<Cell> cells = new ArrayList<>();
        long peak = 0;
        for (String policy : List.of("primary", "offload")) {
            peak = Math.max(peak, side(s, policy, logs, cells));
        }
        String loadAfter = Files.readString(Path.of("/proc/loadavg")).strip();
        String report = report(s, cells, loadRate, dataBytes, peak, loadBefore, loadAfter);
        System.out.println(report);
        new GeneratedSection("DiskBoundSecondaryReads").write(s.out(), "Secondary reads", report);
    }

    /** Loads the records once (kept in {@code dir} for later runs); records/s, or 0 when they were there. */
    private static double load(Settings s, Path logs) throws Exception {
        Path marker = s.dir().resolve("loaded-" + s.records());
        if (Files.exists(marker)) {
            return 0;
        }
        try (Started archive = Started.archive(s, logs, false)) {
            long start = System.nanoTime();
            try (MongoClient c = MongoClients.create(archive.uri())) {
                MongoCollection<Document> items = c.getDatabase(DB).getCollection(COLLECTION);
                items.drop();
                long base = System.currentTimeMillis() - AGE.toMillis();
                for (long from = 0; from < s.records(); from += 1000) {
                    long to = Math.min(s.records(), from + 1000);
                    List<Document> batch = new ArrayList<>();
                    for (long i = from; i < to; i++) {
                        batch.add(record(i, base));
                    }
                    items.withWriteConcern(new WriteConcern(MEMBERS)).insertMany(batch); // all members keep up: the oplog is short
                    if (from % 20_000 == 0) {
                        System.out.println("loaded " + to + " records");
                    }
                }
            }
            double rate = s.records() / ((System.nanoTime() - start) / 1e9);
            Files.writeString(marker, Long.toString(s.records()));
            return rate;
        }
    }

    private static Document record(long i, long base) {
        Document d = new Document("_id", i).append("createdAt", new Date(base - i * 1000));
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int f = 0; f < FIELDS; f++) {
            char[] text = new char[FIELD_BYTES];
            for (int k = 0; k < FIELD_BYTES; k++) {
                text[k] = (char) ('a' + r.nextInt(26));
            }
            d.append("field" + f, new String(text));
        }
        return d;
    }

    /** One side: a cold, capped archive, Thermocline with {@code policy}, every thread count; the archive's peak memory. */
    private static long side(Settings s, String policy, Path logs, List<Cell> cells) throws Exception {
        try (Started archive = Started.archive(s, logs, true);
             EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder().name("fast").build().start()) {
            awaitReplicaSet(archive.uri());
            var fast = TierClients.client(fastSet.connectionString(), "bench-workers");
            var archiveClient = TierClients.client(archive.uri(), "bench-workers");
            try {
                new MetadataStore(fast).ensureCollections();
                ThermoclineConfig config = SecondaryReadsBenchmark.config(fastSet.connectionString(), archive.uri(), COLLECTION, policy);
                try (Feeder feeder = new Feeder(fast, archiveClient, config.collections(), new FeederConfig(1000, Duration.ofMillis(10), true),
                        Feeder.Options.defaults().withRegistry(new PrometheusRegistry())).start();
                     ProxyServer proxy = ProxyServer.create(config).start();
                     MongoClient reading = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?maxPoolSize=300")) {
                    feeder.awaitStreaming(Duration.ofSeconds(60));
                    for (int threads : s.threads()) {
                        Cell c = cell(s, policy, threads, proxy, reading, archive);
                        System.out.println(row(c));
                        cells.add(c);
                    }
                }
            } finally {
                fast.close();
                archiveClient.close();
            }
            return archive.group.peakMemory();
        }
    }

    private static void awaitReplicaSet(String uri) {
        try (MongoClient c = MongoClients.create(uri)) {
            c.getDatabase(DB).getCollection(COLLECTION).withWriteConcern(new WriteConcern(MEMBERS))
                    .find(Filters.eq("_id", 0L)).first();
        }
    }

    /** {@code threads} readers fetch random records by _id (older than the window: the archive answers; linearizable). */
    private static Cell cell(Settings s, String policy, int threads, ProxyServer proxy, MongoClient reading, Started archive)
            throws Exception {
        MongoCollection<Document> items = reading.getDatabase(DB).getCollection(COLLECTION);
        double[][] served = new double[2][];
        ArchiveCgroup.Reads[][] reads = new ArchiveCgroup.Reads[2][];
        ReadLoad.Result r = ReadLoad.run(threads, s.warmup(), s.seconds(), () -> {
            long id = ThreadLocalRandom.current().nextLong(s.records());
            // by _id alone, as YCSB reads: the archive member answers it from its _id index (a filter on more
            // fields makes the embedded member scan); the record is outside the window, so the answer is the archive's
            if (items.find(Filters.eq("_id", id)).first() == null) {
                throw new IllegalStateException("record " + id + " not found");
            }
        }, () -> {
            served[0] = SecondaryReadsBenchmark.served(proxy);
            reads[0] = archive.memberReads();
        }, () -> {
            reads[1] = archive.memberReads();
            served[1] = SecondaryReadsBenchmark.served(proxy);
        });
        double[] perMember = new double[MEMBERS];
        for (int i = 0; i < MEMBERS; i++) {
            perMember[i] = reads[1][i].minus(reads[0][i]).requests() / r.seconds();
        }
        return new Cell(policy, threads, r.opsPerSecond(), r.latency(), SecondaryReadsBenchmark.secondaryShare(served[0], served[1]),
                perMember, archive.primaryIndex(), r.errors());
    }

    private static String row(Cell c) {
        return String.format("| %s | %d | **%.0f** | %.1f | %.1f | %.0f %% | %s (primary m%s) | %d |", c.policy(), c.threads(),
                c.opsPerSecond(), c.latency().getValueAtPercentile(50) / 1000.0, c.latency().getValueAtPercentile(99) / 1000.0,
                100 * c.secondaryShare(), Arrays.stream(c.memberReadsPerSecond()).mapToObj(r -> String.format("%.0f", r))
                        .collect(Collectors.joining(" / ")), c.primary(), c.errors());
    }

    private static String report(Settings s, List<Cell> cells, double loadRate, long dataBytes, long peak, String loadBefore,
                                 String loadAfter) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("Run of %s. Archive: the embedded replica set with %d members in one process on H2 MVStore files"
                        + " (%,d records of %d fields x %d bytes + `createdAt`, all older than the 1-day hot window; %.2f GB of files"
                        + " for the three members%s); process capped at %d MB of memory (JVM and page cache; peak %.0f MB) and each"
                        + " member's threads at **%d disk reads/s** on %s (cgroup v1 blkio, per thread). Page cache dropped before each side."
                        + " Thermocline (fast tier in memory, feeder, proxy) and the clients in the benchmark's JVM; %d s warm-up + %d s"
                        + " measured per cell. Reads: `find({_id: random})` of records outside the window (a fast-tier miss, then the archive's answer), linearizable."
                        + " Machine: %d cores, JVM %s; load average %s at the start, %s at the end (other builds shared the machine; the"
                        + " benchmark ran with CPU priority).%n%n",
                Instant.now().truncatedTo(ChronoUnit.MINUTES), MEMBERS, s.records(), FIELDS, FIELD_BYTES, dataBytes / 1e9,
                loadRate > 0 ? String.format(", loaded at %.0f records/s", loadRate) : "", s.memoryMb(), peak / 1e6, s.iops(),
                s.device(), s.warmup(), s.seconds(), Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getRuntimeMXBean().getVmVersion(), loadBefore, loadAfter));
        b.append("| secondaryReads | client threads | archive reads/s | p50 ms | p99 ms | served by secondaries | disk reads/s m0 / m1 / m2 | errors |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        cells.forEach(c -> b.append(row(c)).append('\n'));
        b.append(String.format("%nCommand (as root): `BENCH_MAIN=io.thermocline.benchmarks.secondaries.DiskBoundSecondaryReads"
                        + " proxy-image/benchmarks/run-tiering.sh records=%d memory=%d iops=%d threads=%s warmup=%d seconds=%d`%n",
                s.records(), s.memoryMb(), s.iops(), s.threads().stream().map(String::valueOf).collect(Collectors.joining(",")),
                s.warmup(), s.seconds()));
        return b.toString();
    }

    private static long dataBytes(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    /** The archive process in its memory group, with each member's threads in a read budget of their own. */
    private record Started(ChildProcess process, ArchiveCgroup group, MemberIoGroups members, List<Integer> ports)
            implements AutoCloseable {

        static Started archive(Settings s, Path logs, boolean capped) throws IOException, InterruptedException {
            Archive.dropCaches();
            ArchiveCgroup group = ArchiveCgroup.create(Archive.GROUP, capped ? s.memoryMb() * 1024 * 1024 : 0, 0, s.device());
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < MEMBERS; i++) {
                ports.add(ChildProcess.freePort());
            }
            ChildProcess process = null;
            try {
                List<String> command = group.wrap(ChildProcess.javaCommand(capped ? s.archiveJvm() : List.of("-Xmx1g"),
                        ArchiveMain.class.getName(), List.of(ports.stream().map(String::valueOf).collect(Collectors.joining(",")),
                                s.dir().toString(), "20000")));
                process = ChildProcess.start("archive", command, ports.get(MEMBERS - 1), logs.resolve("archive.log"));
                MemberIoGroups members = capped ? new MemberIoGroups(process.pid(), MEMBERS, s.iops(), s.device()) : null;
                return new Started(process, group, members, ports);
            } catch (IOException | RuntimeException e) {
                if (process != null) {
                    process.close();
                }
                group.close();
                throw e;
            }
        }

        String uri() {
            return "mongodb://" + ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(",")) + "/?replicaSet=archive";
        }

        ArchiveCgroup.Reads[] memberReads() throws IOException {
            ArchiveCgroup.Reads[] r = new ArchiveCgroup.Reads[MEMBERS];
            for (int i = 0; i < MEMBERS; i++) {
                r[i] = members.reads(i);
            }
            return r;
        }

        /** Which member is primary now, by its index. */
        String primaryIndex() {
            try (MongoClient c = MongoClients.create(uri())) {
                String primary = c.getDatabase("admin").runCommand(new Document("hello", 1)).getString("primary");
                return String.valueOf(IntStream.range(0, MEMBERS).filter(i -> ("127.0.0.1:" + ports.get(i)).equals(primary))
                        .findFirst().orElse(-1));
            }
        }

        @Override
        public void close() throws IOException, InterruptedException {
            try {
                process.close();
            } finally {
                if (members != null) {
                    members.close();
                }
                group.close();
            }
        }
    }
}
