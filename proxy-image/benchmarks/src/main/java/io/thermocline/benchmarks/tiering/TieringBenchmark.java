package io.thermocline.benchmarks.tiering;

import io.thermocline.benchmarks.BenchmarkArgs;
import io.thermocline.benchmarks.ycsb.MongoDbBinding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * Tiering against a real disk-bound archive: YCSB's three prototype mixes against the archive
 * alone and through Thermocline in front of the same archive, in one run; equal offered load;
 * adoption from an empty fast tier (plotted); and the uncapped archive as the ceiling. Writes
 * docs/benchmarks/tiering.md (between its generated markers) and the adoption plot.
 *
 * <p>The archive ({@link ArchiveMain}, the embedded replica set on the H2 MVStore backend) runs
 * in a cgroup that caps its memory, page cache included, and its disk reads per second
 * ({@link ArchiveCgroup}; root needed), started after the page cache is dropped. Thermocline
 * ({@link TieredStackMain}: fast tier in memory, feeder, evictor, proxy) runs in a second process,
 * uncapped; the YCSB client in this one. Arguments (all optional, {@code key=value}):
 * {@code quick} (short runs on a smaller data set), {@code dir} (archive data, kept and reused),
 * {@code records}, {@code memory} (MB), {@code iops}, {@code archiveJvm}, {@code threads},
 * {@code warmup}, {@code seconds}, {@code rounds}, {@code adoption} (seconds per side),
 * {@code adoptionMix}, {@code mixes}, {@code window}, {@code feeder} (extra THERMOCLINE_ settings,
 * comma-separated), {@code warmer}, {@code ceiling}, {@code fastOplog} (the fast tier's oplog in entries), {@code only=load} or {@code only=adoption},
 * {@code out}, {@code device}.
 */
public final class TieringBenchmark {
    static final String DATABASE = "ycsb";
    static final String TABLE = "usertable";
    static final String DATE_FIELD = "createdAt";

    /**
     * YCSB's key order. The H2 backend keeps documents in {@code _id} order, so {@code ordered} keys
     * (the default here) lay them out in insertion order as MongoDB's record ids do; {@code hashed}
     * (YCSB's default) scatters them, and costs about ten times the file size to load.
     */
    private static String insertOrder = "ordered";
    /** JVM options of Thermocline's process; {@code jfr=FILE} adds a flight recording of it, to profile it under the run. */
    private static List<String> stackJvm = List.of("-Xmx4g");

    private TieringBenchmark() {}

    public static void main(String[] args) throws Exception {
        io.thermocline.benchmarks.ModuleClasses.require();
        Map<String, String> o = BenchmarkArgs.parse(args);
        boolean quick = o.containsKey("quick");
        insertOrder = o.getOrDefault("insertorder", "ordered");
        if (o.containsKey("jfr")) {
            stackJvm = List.of("-Xmx4g", "-XX:StartFlightRecording=dumponexit=true,filename=" + o.get("jfr"));
        }
        // only=adoption: the adoption of both sides and nothing after it (to profile the cutover onto a cold fast tier)
        boolean adoptionOnly = "adoption".equals(o.get("only"));
        String mixes = adoptionOnly ? "" : o.getOrDefault("mixes", "store,read-heavy,concentrated");
        Settings s = new Settings(
                Path.of(o.getOrDefault(
                        "dir", quick ? "/var/tmp/thermocline-tiering-quick" : "/var/tmp/thermocline-tiering")),
                Long.parseLong(o.getOrDefault("records", quick ? "300000" : "1400000")),
                // the same cap in both modes: the archive JVM alone (128 MB heap, metaspace, code cache, direct
                // buffers, two malloc arenas) takes about 200 MB of it, and at 192 MB the kernel killed quick's archive
                Long.parseLong(o.getOrDefault("memory", "256")),
                Integer.parseInt(o.getOrDefault("iops", "1500")),
                List.of(o.getOrDefault(
                                "archiveJvm",
                                "-Xmx128m -XX:MaxDirectMemorySize=32m -XX:+UseSerialGC -Xss512k -XX:ReservedCodeCacheSize=32m -XX:MaxMetaspaceSize=96m")
                        .split("\\s+")),
                Integer.parseInt(o.getOrDefault("threads", "64")),
                Integer.parseInt(o.getOrDefault("warmup", quick ? "10" : "20")),
                Integer.parseInt(o.getOrDefault("seconds", quick ? "20" : "45")),
                Integer.parseInt(o.getOrDefault("rounds", quick ? "1" : "2")),
                Integer.parseInt(o.getOrDefault("adoption", quick ? "60" : "240")),
                Mix.named(o.getOrDefault("adoptionMix", "concentrated")),
                mixes.isEmpty() ? new String[0] : mixes.split(","),
                adoptionOnly ? new String[0] : o.getOrDefault("equal", mixes).split(","),
                o.getOrDefault("window", "40d"),
                o.getOrDefault("feeder", "").isBlank()
                        ? List.of()
                        : List.of(o.get("feeder").split(",")),
                Boolean.parseBoolean(o.getOrDefault("warmer", "false")),
                !adoptionOnly && Boolean.parseBoolean(o.getOrDefault("ceiling", "true")),
                Integer.parseInt(o.getOrDefault("fastOplog", "600000")),
                Path.of(o.getOrDefault("out", "docs/benchmarks/tiering.md")),
                quick);
        Files.createDirectories(s.dir());
        String device = o.containsKey("device") ? o.get("device") : ArchiveCgroup.deviceOf(s.dir());
        Path logs = Files.createTempDirectory("thermocline-tiering");
        System.out.println("logs in " + logs + ", archive data in " + s.dir() + " on device " + device);
        // CoreWorkload reports into YCSB's static Measurements, which must be configured first.
        site.ycsb.measurements.Measurements.setProperties(new Properties());

        Archive.Caps caps = new Archive.Caps(s.memoryMb() * 1024 * 1024, s.iops(), s.archiveJvm(), 2000);
        Loader.Loaded loaded = Loader.read(s.dir());
        if (loaded == null) {
            System.out.printf("loading %,d records into %s%n", s.records(), s.dir());
            loaded = Loader.load(base("unused", 0, 0), s.dir(), s.records());
            System.out.printf(
                    "loaded %,d records in %.0f s (%.0f records/s)%n",
                    loaded.records(), loaded.seconds(), loaded.recordsPerSecond());
        }
        if (o.containsKey("only") && o.get("only").equals("load")) {
            return;
        }
        Report report = new Report(s, loaded, device, dataBytes(s.dir()));
        long[] nextKey = new long[1];

        // 1. adoption from a cold archive and an empty fast tier, both sides
        try (Archive archive = Archive.start(s.dir(), caps, device, logs.resolve("archive-adoption-alone.log"))) {
            nextKey[0] = archive.count(DATABASE, TABLE);
            Driver.Result r = alone(s, loaded, archive, s.adoptionMix(), nextKey, 0, s.adoption(), 0, report);
            report.adoption("archive alone", r);
            report.peakMemory(archive.peakMemory());
        }
        Archive archive = Archive.start(s.dir(), caps, device, logs.resolve("archive.log"));
        TieredStack stack = null;
        try {
            stack = TieredStack.start(
                    archive.uri(), s.warmer(), s.fastOplog(), settings(s), stackJvm, logs.resolve("thermocline.log"));
            Driver.Result r =
                    thermocline(s, loaded, stack, archive, s.adoptionMix(), nextKey, 0, s.adoption(), 0, report);
            report.adoption("Thermocline", r);
            settle(stack);

            // 2. each mix, alternating sides, the fast tier as the adoption left it
            for (String name : s.mixes()) {
                Mix mix = Mix.named(name);
                for (int round = 0; round < s.rounds(); round++) {
                    report.steady(
                            mix, false, alone(s, loaded, archive, mix, nextKey, s.warmup(), s.seconds(), 0, report));
                    report.steady(
                            mix,
                            true,
                            thermocline(s, loaded, stack, archive, mix, nextKey, s.warmup(), s.seconds(), 0, report));
                    settle(stack);
                }
            }
            // 3. equal offered load: each mix at the archive's own maximum on it
            for (String name : s.equalMixes()) {
                Mix mix = Mix.named(name);
                int target = (int) report.aloneOpsPerSecond(mix);
                if (target > 0) {
                    report.equalLoad(
                            mix,
                            target,
                            false,
                            alone(s, loaded, archive, mix, nextKey, s.warmup(), s.seconds(), target, report));
                    report.equalLoad(
                            mix,
                            target,
                            true,
                            thermocline(
                                    s, loaded, stack, archive, mix, nextKey, s.warmup(), s.seconds(), target, report));
                    settle(stack);
                }
            }
            report.peakMemory(archive.peakMemory());
        } finally {
            if (stack != null) {
                stack.close();
            }
            archive.close();
        }
        // 4. the ceiling: the same archive with no caps and its files in the page cache
        if (s.ceiling()) {
            try (Archive uncapped =
                    Archive.start(s.dir(), caps.uncapped(), device, logs.resolve("archive-uncapped.log"))) {
                readFiles(s.dir());
                for (String name : s.mixes()) {
                    Mix mix = Mix.named(name);
                    report.ceiling(mix, alone(s, loaded, uncapped, mix, nextKey, s.warmup(), s.seconds(), 0, report));
                }
            }
        }
        report.write();
        System.out.println(report.markdown());
    }

    record Settings(
            Path dir,
            long records,
            long memoryMb,
            int iops,
            List<String> archiveJvm,
            int threads,
            int warmup,
            int seconds,
            int rounds,
            int adoption,
            Mix adoptionMix,
            String[] mixes,
            String[] equalMixes,
            String window,
            List<String> feeder,
            boolean warmer,
            boolean ceiling,
            int fastOplog,
            Path out,
            boolean quick) {}

    /** The tiered stack's settings: the YCSB table tiered by its date, the hot window, any extra settings given. */
    static List<String> settings(Settings s) {
        List<String> out = new ArrayList<>();
        out.add("THERMOCLINE_COLLECTIONS=[{database: " + DATABASE + ", collection: " + TABLE + ", ageField: "
                + DATE_FIELD + ", hotWindow: " + s.window() + "}]");
        out.add("THERMOCLINE_TIERS_ARCHIVE_CONNECTION_BUDGET=64");
        out.addAll(s.feeder());
        return out;
    }

    static Properties base(String url, long loadedRecords, long origin) {
        Properties p = new Properties();
        p.setProperty("mongodb.url", url.contains("?") ? url + "&maxPoolSize=128" : url + "?maxPoolSize=128");
        p.setProperty("mongodb.database", DATABASE);
        p.setProperty("mongodb.datefield", DATE_FIELD);
        p.setProperty("table", TABLE);
        p.setProperty("fieldcount", "10");
        p.setProperty("fieldlength", "100");
        p.setProperty("readallfields", "true");
        p.setProperty("operationcount", Integer.toString(Integer.MAX_VALUE));
        p.setProperty("insertorder", insertOrder);
        p.setProperty(
                "zeropadding", "12"); // ordered keys then sort as numbers: the H2 backend keeps documents in _id order
        p.setProperty(DatedWorkload.FIELD, DATE_FIELD);
        if (loadedRecords > 0) {
            p.setProperty(DatedWorkload.LOADED, Long.toString(loadedRecords));
            p.setProperty(DatedWorkload.ORIGIN, Long.toString(origin));
        }
        return p;
    }

    private static Driver.Result run(
            Settings s,
            Loader.Loaded loaded,
            String url,
            Mix mix,
            long[] nextKey,
            int warmup,
            int seconds,
            int target,
            Supplier<ArchiveCgroup.Reads> reads)
            throws Exception {
        Properties p = base(url, loaded.records(), loaded.origin());
        p.setProperty("recordcount", Long.toString(nextKey[0]));
        mix.applyTo(p);
        try {
            Driver.Result r = Driver.run(p, s.threads(), warmup, seconds, target, reads);
            nextKey[0] = Math.max(nextKey[0], r.nextInsertKey());
            System.out.printf(
                    "%s %s%s: %.0f ops/s, read p95 %.1f ms, update p99 %.1f ms, %d failed, %d not found, archive %.0f reads/s%s%n",
                    mix.name(),
                    url,
                    target > 0 ? " target " + target : "",
                    r.opsPerSecond(),
                    Driver.Result.ms(r.read(), 95),
                    Driver.Result.ms(r.update(), 99),
                    r.failed(),
                    r.notFound(),
                    r.archiveReadsPerSecond(),
                    r.failed() > 0 ? " (last failure: " + r.lastFailure() + ")" : "");
            return r;
        } finally {
            MongoDbBinding.closeClients();
        }
    }

    /** A run straight to the archive, noting the CPU each process used. */
    private static Driver.Result alone(
            Settings s,
            Loader.Loaded loaded,
            Archive archive,
            Mix mix,
            long[] nextKey,
            int warmup,
            int seconds,
            int target,
            Report report)
            throws Exception {
        Duration archiveCpu = archive.cpu();
        Duration clientCpu = clientCpu();
        Driver.Result r = run(s, loaded, archive.uri(), mix, nextKey, warmup, seconds, target, archive::reads);
        double total = warmup + seconds;
        report.note(String.format(
                "CPU cores used: archive %.2f, client %.2f",
                archive.cpu().minus(archiveCpu).toMillis() / 1000.0 / total,
                clientCpu().minus(clientCpu).toMillis() / 1000.0 / total));
        return r;
    }

    /** The proxy's routing decisions, and the label sets of reads by the tier that answered them. */
    private static final String ROUTING = "thermocline_proxy_routing_decisions_total";

    private static final String[] READ_FAST = {"operation=\"read\"", "tier=\"fast\""};
    private static final String[] READ_ARCHIVE = {"operation=\"read\"", "tier=\"archive\""};

    /** The proxy's copy-ups by how they passed the sync barrier ({@code outcome}). */
    private static final String COPY_UP_BARRIER = "thermocline_proxy_copy_up_barrier_total";

    /** A run through Thermocline, noting the feeder's largest lag, the fast tier's size after it, and the CPU each process used. */
    private static Driver.Result thermocline(
            Settings s,
            Loader.Loaded loaded,
            TieredStack stack,
            Archive archive,
            Mix mix,
            long[] nextKey,
            int warmup,
            int seconds,
            int target,
            Report report)
            throws Exception {
        Duration stackCpu = stack.cpu();
        Duration archiveCpu = archive.cpu();
        Duration clientCpu = clientCpu();
        TieredStack.Metrics before = stack.metrics();
        Driver.Result r;
        double lag;
        try (TieredStack.LagSampler sampler = stack.sampleLag()) {
            r = run(s, loaded, stack.uri(), mix, nextKey, warmup, seconds, target, archive::reads);
            lag = sampler.max();
        }
        double total = warmup + seconds;
        TieredStack.Metrics after = stack.metrics();
        double fast = after.since(before, ROUTING, READ_FAST);
        double archived = after.since(before, ROUTING, READ_ARCHIVE);
        report.note(String.format(
                "reads answered by the archive %.1f %% (warm-up included); feeder lag max %.1f s; fast tier %,d docs after; promotion rounds %,.0f without the barrier, %,.0f"
                        + " leaving fenced documents out; CPU cores used: Thermocline %.2f, archive %.2f, client %.2f",
                100 * archived / (fast + archived),
                lag,
                stack.fastTierDocuments(DATABASE, TABLE),
                after.since(before, COPY_UP_BARRIER, "\"skipped\""),
                after.since(before, COPY_UP_BARRIER, "\"left\""),
                stack.cpu().minus(stackCpu).toMillis() / 1000.0 / total,
                archive.cpu().minus(archiveCpu).toMillis() / 1000.0 / total,
                clientCpu().minus(clientCpu).toMillis() / 1000.0 / total));
        return r;
    }

    static Duration clientCpu() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        instanceof com.sun.management.OperatingSystemMXBean os
                ? Duration.ofNanos(os.getProcessCpuTime())
                : Duration.ZERO;
    }

    /** Lets the feeder mirror what a run wrote before the archive is read directly. */
    private static void settle(TieredStack stack) throws IOException, InterruptedException {
        if (!stack.awaitMirrored(Duration.ofMinutes(3))) {
            System.out.println("warning: the feeder had not mirrored everything after 3 minutes");
        }
    }

    private static long dataBytes(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.toString().endsWith(".mv"))
                    .mapToLong(f -> f.toFile().length())
                    .sum();
        }
    }

    /** Reads the archive's files once, so the uncapped archive serves from the page cache. */
    private static void readFiles(Path dir) throws IOException {
        byte[] buffer = new byte[1 << 20];
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                try (var in = Files.newInputStream(f)) {
                    while (in.read(buffer) > 0) {
                        // the page cache keeps what was read
                    }
                }
            }
        }
    }
}
