package io.thermocline.benchmarks.warmer;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Indexes;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.benchmarks.GeneratedSection;
import io.thermocline.benchmarks.tiering.Archive;
import io.thermocline.benchmarks.tiering.ArchiveCgroup;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.storage.Storage;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;

/**
 * How long one warmer batch takes against the embedded on-disk archive, without and with an index on the age field
 * (issue 39): the real {@link Warmer} ({@code step}: the batch's find of 500 keys newest first after the checkpoint, the
 * check for number-aged documents, the copy-up into the fast tier) over {@code records} documents shaped as the tiering
 * benchmark's (YCSB's ten 100-byte fields, {@code _id} {@code user} + 12 digits, {@code createdAt} over one year), a
 * 40-day window. Loaded once into {@code dir}; each side starts a fresh fast tier and walks from the top. With
 * {@code memory} (MB) and {@code iops} the archive runs in a process of its own in a cgroup capped as the tiering
 * benchmark's ({@link Archive}), started again with a dropped page cache after the index is made, so both sides start
 * cold, and its disk reads are counted. Prints a table and writes it into docs/benchmarks/tiering.md between its markers.
 *
 * <pre>
 * mvn -q -Pbench -DskipTests -pl proxy-image/benchmarks -am verify \
 *     -Dbench.main=io.thermocline.benchmarks.warmer.WarmerBatchBenchmark -Dbench.args="records=200000 batches=5 memory=256 iops=1500"
 * </pre>
 */
public final class WarmerBatchBenchmark {

    private static final String DATABASE = "ycsb";
    private static final String TABLE = "usertable";
    private static final String AGE = "createdAt";

    private WarmerBatchBenchmark() {}

    record Side(
            String name,
            double indexBuildSeconds,
            List<Double> batchMillis,
            List<Double> findMillis,
            int copied,
            TreeSet<String> ids,
            String load,
            long bytesRead) {}

    /** The time the archive took to answer the warmer's find commands (its batch's keys, the number check, the copy-up's reads). */
    static final class ArchiveFinds implements com.mongodb.event.CommandListener {
        private final java.util.Map<Integer, Long> started = new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.concurrent.atomic.LongAdder nanos = new java.util.concurrent.atomic.LongAdder();
        private final java.util.concurrent.atomic.LongAdder count = new java.util.concurrent.atomic.LongAdder();

        @Override
        public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
            if (event.getCommandName().equals("find")) {
                started.put(event.getRequestId(), System.nanoTime());
            }
        }

        @Override
        public void commandSucceeded(com.mongodb.event.CommandSucceededEvent event) {
            ended(event.getRequestId());
        }

        @Override
        public void commandFailed(com.mongodb.event.CommandFailedEvent event) {
            ended(event.getRequestId());
        }

        private void ended(int requestId) {
            Long t0 = started.remove(requestId);
            if (t0 != null) {
                nanos.add(System.nanoTime() - t0);
                count.increment();
            }
        }

        void reset() {
            nanos.reset();
            count.reset();
        }

        double millis() {
            return nanos.sum() / 1e6;
        }

        long count() {
            return count.sum();
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = BenchmarkArgs.parse(args);
        int records = Integer.parseInt(a.getOrDefault("records", "200000"));
        int batches = Integer.parseInt(a.getOrDefault("batches", "10"));
        int batchSize = Integer.parseInt(a.getOrDefault("batch", "500"));
        Duration window = Duration.ofDays(Long.parseLong(a.getOrDefault("windowDays", "40")));
        Path dir = Path.of(a.getOrDefault("dir", "/var/tmp/thermocline-warmer-batch"));
        Path out = Path.of(a.getOrDefault("out", "docs/benchmarks/tiering.md"));
        // memory (MB) and iops: the archive in a process of its own, capped as the tiering benchmark's (0: in-process)
        long memoryMb = Long.parseLong(a.getOrDefault("memory", "0"));
        int iops = Integer.parseInt(a.getOrDefault("iops", "0"));
        Archive.Caps caps = memoryMb > 0 || iops > 0
                ? new Archive.Caps(
                        memoryMb * 1024 * 1024,
                        iops,
                        List.of(a.getOrDefault(
                                        "archiveJvm",
                                        "-Xmx128m -XX:MaxDirectMemorySize=32m -XX:+UseSerialGC -Xss512k -XX:ReservedCodeCacheSize=32m -XX:MaxMetaspaceSize=96m")
                                .split(" ")),
                        2000)
                : null;

        Instant origin = load(dir, records);
        // the warmer's clock stands at the load's time, so the window holds the same documents however late it runs
        Clock clock = Clock.fixed(origin, ZoneOffset.UTC);
        CollectionPolicy policy = new CollectionPolicy(DATABASE, TABLE, AGE, window);
        List<Side> sides = new ArrayList<>();
        sides.add(side("no index (engine scan)", dir, caps, policy, clock, batches, batchSize, false));
        sides.add(side("index {createdAt: 1}", dir, caps, policy, clock, batches, batchSize, true));
        boolean same = sides.get(0).ids().equals(sides.get(1).ids());
        String table = table(records, batches, batchSize, window, sides, same, caps);
        System.out.println(table);
        new GeneratedSection("WarmerBatchBenchmark")
                .write(
                        out,
                        "## One warmer batch on the embedded on-disk archive, without and with an index (issue 39)",
                        table);
        if (!same) {
            throw new IllegalStateException(
                    "the two sides copied different documents: the plan's answer differs from the scan's");
        }
    }

    /** Loads {@code records} documents straight into the archive member's storage, once (a note marks it loaded). */
    private static Instant load(Path dir, int records) throws Exception {
        Path note = dir.resolve("loaded-" + records);
        if (Files.exists(note)) {
            return Instant.ofEpochMilli(Long.parseLong(Files.readString(note).trim()));
        }
        if (Files.exists(dir)) {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(p -> p.toFile().delete());
            }
        }
        Files.createDirectories(dir);
        long origin = System.currentTimeMillis();
        long year = Duration.ofDays(365).toMillis();
        Random random = new Random(39);
        long t0 = System.nanoTime();
        try (MemberStore store = MemberStore.open(Storage.directory(dir), "member0")) {
            BsonArray pending = new BsonArray();
            for (int k = 0; k < records; k++) {
                BsonDocument d = new BsonDocument("_id", new BsonString(String.format("user%012d", k)));
                for (int f = 0; f < 10; f++) {
                    d.append("field" + f, new BsonString(text(random, 100)));
                }
                d.append(AGE, new BsonDateTime(origin - year * (records - 1L - k) / records));
                pending.add(d);
                if (pending.size() == 1000 || k == records - 1) {
                    BsonDocument reply = store.command(
                            DATABASE, new BsonDocument("insert", new BsonString(TABLE)).append("documents", pending));
                    if (reply.getNumber("ok").intValue() != 1 || reply.containsKey("writeErrors")) {
                        throw new IllegalStateException("load failed: " + reply.toJson());
                    }
                    pending = new BsonArray();
                }
            }
            store.commit();
        }
        System.out.printf("loaded %,d documents in %.0f s%n", records, (System.nanoTime() - t0) / 1e9);
        Files.writeString(note, Long.toString(origin));
        return Instant.ofEpochMilli(origin);
    }

    private static String text(Random random, int length) {
        char[] chars = new char[length];
        for (int i = 0; i < length; i++) {
            chars[i] = (char) ('a' + random.nextInt(26));
        }
        return new String(chars);
    }

    /** The archive as measured: in this process, or a capped process of its own whose disk reads are counted. */
    private interface ArchiveUnderTest extends AutoCloseable {
        String uri();

        /** Bytes the archive's cgroup read from disk so far (-1: not counted). */
        long bytesRead();
    }

    private static ArchiveUnderTest startArchive(Path dir, Archive.Caps caps) throws Exception {
        if (caps == null) {
            EmbeddedReplicaSet set = EmbeddedReplicaSet.builder()
                    .name("archive")
                    .storage(Storage.directory(dir))
                    .build()
                    .start();
            return new ArchiveUnderTest() {
                public String uri() {
                    return set.connectionString();
                }

                public long bytesRead() {
                    return -1;
                }

                public void close() {
                    set.close();
                }
            };
        }
        // the page cache is dropped first (Archive.start), so each side starts from a cold archive
        Archive archive =
                Archive.start(dir, caps, ArchiveCgroup.deviceOf(dir), dir.resolveSibling("warmer-batch-archive.log"));
        return new ArchiveUnderTest() {
            public String uri() {
                return archive.uri();
            }

            public long bytesRead() {
                return archive.reads().bytes();
            }

            public void close() throws Exception {
                archive.close();
            }
        };
    }

    /** Creates the index on the age field (its build's seconds) or drops it, in an archive started for that alone. */
    private static double prepareIndex(Path dir, Archive.Caps caps, boolean indexed) throws Exception {
        try (ArchiveUnderTest archive = startArchive(dir, caps);
                MongoClient client = MongoClients.create(archive.uri())) {
            var usertable = client.getDatabase(DATABASE).getCollection(TABLE);
            boolean hasIndex = usertable.listIndexes().into(new ArrayList<>()).stream()
                    .anyMatch(i -> i.get("key", Document.class).containsKey(AGE));
            if (indexed && !hasIndex) {
                long t0 = System.nanoTime();
                usertable.createIndex(Indexes.ascending(AGE));
                return (System.nanoTime() - t0) / 1e9;
            }
            if (!indexed && hasIndex) {
                usertable.dropIndex(Indexes.ascending(AGE));
            }
            return 0;
        }
    }

    private static Side side(
            String name,
            Path dir,
            Archive.Caps caps,
            CollectionPolicy policy,
            Clock clock,
            int batches,
            int batchSize,
            boolean indexed)
            throws Exception {
        double build = prepareIndex(dir, caps, indexed);
        // started again for the batches: a capped archive starts from a dropped page cache, not the build's
        String loadBefore = loadAverage();
        try (ArchiveUnderTest archiveSet = startArchive(dir, caps);
                EmbeddedReplicaSet fastSet = EmbeddedReplicaSet.builder()
                        .name("fast")
                        .storage(Storage.memory())
                        .build()
                        .start()) {
            var fast = TierClients.client(fastSet.connectionString(), "bench-warmer");
            ArchiveFinds finds = new ArchiveFinds();
            // the warmer's archive client as TierClients makes it, with the time of each find command recorded
            var archive = com.mongodb.reactivestreams.client.MongoClients.create(
                    TierClients.settings(archiveSet.uri(), io.thermocline.config.TlsConfig.defaults())
                            .applicationName("bench-warmer")
                            .retryWrites(true)
                            .readPreference(com.mongodb.ReadPreference.primary())
                            .readConcern(com.mongodb.ReadConcern.MAJORITY)
                            .writeConcern(com.mongodb.WriteConcern.MAJORITY)
                            .addCommandListener(finds)
                            .build());
            new io.thermocline.tiering.metadata.MetadataStore(fast).ensureCollections(); // as warmAll does first
            try (Feeder feeder = new Feeder(
                            fast,
                            archive,
                            List.of(policy),
                            FeederConfig.defaults(),
                            Feeder.Options.defaults().withRegistry(new PrometheusRegistry()))
                    .start()) {
                feeder.awaitStreaming(Duration.ofSeconds(60));
                Warmer warmer = new Warmer(
                        fast,
                        archive,
                        List.of(policy),
                        new WarmerConfig(batchSize, 1_000_000),
                        Warmer.Options.defaults().withClock(clock).withRegistry(new PrometheusRegistry()));
                List<Double> millis = new ArrayList<>();
                List<Double> findMillis = new ArrayList<>();
                long readBefore = archiveSet.bytesRead();
                for (int i = 0; i < batches; i++) {
                    finds.reset();
                    long t0 = System.nanoTime();
                    Warmer.Progress progress = warmer.step(policy);
                    millis.add((System.nanoTime() - t0) / 1e6);
                    findMillis.add(finds.millis());
                    System.out.printf(
                            "%s: batch %d %s in %.1f ms (archive finds: %d, %.1f ms)%n",
                            name, i + 1, progress, millis.get(i), finds.count(), findMillis.get(i));
                    if (progress == Warmer.Progress.COMPLETE) {
                        break;
                    }
                }
                TreeSet<String> ids = new TreeSet<>();
                try (MongoClient fastUser = MongoClients.create(fastSet.connectionString())) {
                    fastUser.getDatabase(DATABASE)
                            .getCollection(TABLE)
                            .find()
                            .projection(new Document("_id", 1))
                            .forEach(d -> ids.add(String.valueOf(d.get("_id"))));
                }
                warmer.close();
                fast.close();
                archive.close();
                long read = readBefore < 0 ? -1 : archiveSet.bytesRead() - readBefore;
                return new Side(
                        name, build, millis, findMillis, ids.size(), ids, loadBefore + " / " + loadAverage(), read);
            }
        }
    }

    private static double medianAfterFirst(List<Double> values) {
        double[] sorted = values.stream()
                .skip(1)
                .mapToDouble(Double::doubleValue)
                .sorted()
                .toArray();
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length / 2];
    }

    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (java.io.IOException e) {
            return "?";
        }
    }

    private static String table(
            int records,
            int batches,
            int batchSize,
            Duration window,
            List<Side> sides,
            boolean same,
            Archive.Caps caps) {
        StringBuilder t = new StringBuilder();
        t.append(String.format(
                "%d documents, %d-day window, batches of %d, the first %d batches of a walk from the top; archive %s; run %s UTC%n%n",
                records,
                window.toDays(),
                batchSize,
                batches,
                caps == null
                        ? "in the benchmark's process, uncapped"
                        : String.format(
                                "a process of its own capped at %d MB (heap and page cache) and %d reads/s, page cache dropped before each side",
                                caps.memoryBytes() / (1024 * 1024), caps.readIops()),
                Instant.now().toString().substring(0, 16).replace('T', ' ')));
        t.append("| archive | index build | batch 1 (ms) | batches 2-n median (ms) | slowest (ms)"
                + " | archive finds, batch 1 (ms) | archive finds, batches 2-n median (ms) | documents copied"
                + " | archive disk reads, all batches (MB) | load average (start / end) |\n");
        t.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Side s : sides) {
            double max = s.batchMillis().stream()
                    .mapToDouble(Double::doubleValue)
                    .max()
                    .orElse(Double.NaN);
            t.append(String.format(
                    "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %,d | %s | %s |%n",
                    s.name(),
                    s.indexBuildSeconds() > 0 ? String.format("%.1f s", s.indexBuildSeconds()) : "-",
                    s.batchMillis().get(0),
                    medianAfterFirst(s.batchMillis()),
                    max,
                    s.findMillis().get(0),
                    medianAfterFirst(s.findMillis()),
                    s.copied(),
                    s.bytesRead() < 0 ? "-" : String.format("%,d", s.bytesRead() / (1024 * 1024)),
                    s.load()));
        }
        t.append(String.format("%nBoth sides copied %s documents.%n", same ? "the same" : "DIFFERENT"));
        return t.toString();
    }
}
