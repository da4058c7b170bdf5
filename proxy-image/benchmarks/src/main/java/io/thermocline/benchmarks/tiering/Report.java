package io.thermocline.benchmarks.tiering;

import io.thermocline.benchmarks.GeneratedSection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Collects the runs, writes the tables between the generated markers of tiering.md, and plots adoption. */
final class Report {
    static final GeneratedSection SECTION = new GeneratedSection("TieringBenchmark");

    /** Every run of one side of one cell, summed. */
    static final class Side {
        long operations;
        long failed;
        long notFound;
        double seconds;
        long archiveReads;
        final Histogram read = new Histogram(3);
        final Histogram update = new Histogram(3);
        final Histogram insert = new Histogram(3);
        int runs;

        void add(Driver.Result r) {
            operations += r.operations();
            failed += r.failed();
            notFound += r.notFound();
            seconds += r.seconds();
            archiveReads += r.archiveReads().requests();
            read.add(r.read());
            update.add(r.update());
            insert.add(r.insert());
            runs++;
        }

        double opsPerSecond() {
            return seconds == 0 ? 0 : operations / seconds;
        }

        double readsPerSecond() {
            return seconds == 0 ? 0 : archiveReads / seconds;
        }
    }

    private final TieringBenchmark.Settings s;
    private final Loader.Loaded loaded;
    private final String device;
    private final long dataBytes;
    private final Map<String, Side[]> steady = new LinkedHashMap<>();
    /** Each mix at equal offered load: both sides, and the target (the archive's own maximum on that mix). */
    private final Map<String, Side[]> equal = new LinkedHashMap<>();

    private final Map<String, Integer> equalTargets = new LinkedHashMap<>();
    private final Map<String, Side> ceiling = new LinkedHashMap<>();
    private final Map<String, Driver.Result> adoption = new LinkedHashMap<>();
    private final List<String> rawRows = new ArrayList<>();
    private long peakMemory;
    private String note = "";

    Report(TieringBenchmark.Settings s, Loader.Loaded loaded, String device, long dataBytes) {
        this.s = s;
        this.loaded = loaded;
        this.device = device;
        this.dataBytes = dataBytes;
    }

    void steady(Mix mix, boolean thermocline, Driver.Result r) {
        steady.computeIfAbsent(mix.name(), k -> new Side[] {new Side(), new Side()})[thermocline ? 1 : 0].add(r);
        raw(mix.name(), thermocline ? "Thermocline" : "archive alone", r);
    }

    void equalLoad(Mix mix, int target, boolean thermocline, Driver.Result r) {
        equalTargets.put(mix.name(), target);
        equal.computeIfAbsent(mix.name(), k -> new Side[] {new Side(), new Side()})[thermocline ? 1 : 0].add(r);
        raw(mix.name() + " at " + target + " ops/s", thermocline ? "Thermocline" : "archive alone", r);
    }

    void ceiling(Mix mix, Driver.Result r) {
        ceiling.computeIfAbsent(mix.name(), k -> new Side()).add(r);
        raw(mix.name(), "archive uncapped", r);
    }

    void adoption(String side, Driver.Result r) {
        adoption.put(side, r);
        raw(s.adoptionMix().name() + " adoption", side, r);
    }

    void peakMemory(long bytes) {
        peakMemory = Math.max(peakMemory, bytes);
    }

    double aloneOpsPerSecond(Mix mix) {
        Side[] sides = steady.get(mix.name());
        return sides == null ? 0 : sides[0].opsPerSecond();
    }

    /** A remark on the run about to be added (CPU per process; on Thermocline's runs also feeder lag and fast-tier size). */
    /** Notes for the next run's row; the machine's load average at its end is added (other builds share the 2 cores). */
    void note(String text) {
        note = text + "; load average " + loadAverage();
    }

    static String loadAverage() {
        try {
            String[] f = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                    .trim()
                    .split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (java.io.IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private void raw(String cell, String side, Driver.Result r) {
        rawRows.add(String.format(
                "| %s | %s | %.0f | %s | %s | %s | %d | %d | %.0f | %.1f | %s |",
                cell,
                side,
                r.opsPerSecond(),
                pcts(r.read()),
                pcts(r.update()),
                pcts(r.insert()),
                r.failed(),
                r.notFound(),
                r.archiveReadsPerSecond(),
                r.archiveReads().bytes() / r.seconds() / 1e6,
                note));
        note = "";
    }

    private static String pcts(Histogram h) {
        if (h.getTotalCount() == 0) {
            return "-";
        }
        return String.format("%.1f / %.1f / %.1f", ms(h, 50), ms(h, 95), ms(h, 99));
    }

    private static double ms(Histogram h, double p) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p) / 1000.0;
    }

    String markdown() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                "Run of %s, %s mode. Archive: %,d records loaded (%,d now, 10 fields x 100 bytes + `%s`), %.2f GB of H2 MVStore files, "
                        + "loaded at %.0f records/s; capped at %d MB of memory (JVM and page cache) and %d disk reads/s on %s "
                        + "(cgroup peak %.0f MB). %d YCSB threads; %d s warm-up + %d s measured per run, %d run(s) per side; hot window %s.%n%n",
                Instant.now().truncatedTo(ChronoUnit.MINUTES),
                s.quick() ? "quick" : "full",
                loaded.records(),
                loaded.records(),
                TieringBenchmark.DATE_FIELD,
                dataBytes / 1e9,
                loaded.recordsPerSecond(),
                s.memoryMb(),
                s.iops(),
                device,
                peakMemory / 1e6,
                s.threads(),
                s.warmup(),
                s.seconds(),
                s.rounds(),
                s.window()));
        b.append("### Ops/s per mix\n\n");
        b.append(
                "| mix | archive alone ops/s | Thermocline ops/s | ratio | read p95 ms alone / Thermocline | update p99 ms alone / Thermocline "
                        + "| archive reads/s alone / Thermocline | failed alone / Thermocline | not found alone / Thermocline |\n|---|---|---|---|---|---|---|---|---|\n");
        steady.forEach((mix, sides) -> b.append(String.format(
                "| %s | %.0f | %.0f | **%.2f** | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | %d / %d | %d / %d |%n",
                mix,
                sides[0].opsPerSecond(),
                sides[1].opsPerSecond(),
                sides[1].opsPerSecond() / sides[0].opsPerSecond(),
                ms(sides[0].read, 95),
                ms(sides[1].read, 95),
                ms(sides[0].update, 99),
                ms(sides[1].update, 99),
                sides[0].readsPerSecond(),
                sides[1].readsPerSecond(),
                sides[0].failed,
                sides[1].failed,
                sides[0].notFound,
                sides[1].notFound)));
        if (!equal.isEmpty()) {
            b.append("\n### Equal offered load (each mix at the archive's own maximum on it)\n\n");
            b.append(
                    "| mix | target ops/s | side | achieved ops/s | read p50 / p95 / p99 ms | update p50 / p95 / p99 ms | archive reads/s | failed | not found |"
                            + "\n|---|---|---|---|---|---|---|---|---|\n");
            String[] names = {"archive alone", "Thermocline"};
            equal.forEach((mix, sides) -> {
                for (int i = 0; i < 2; i++) {
                    b.append(String.format(
                            "| %s | %d | %s | %.0f | %s | %s | %.0f | %d | %d |%n",
                            mix,
                            equalTargets.get(mix),
                            names[i],
                            sides[i].opsPerSecond(),
                            pcts(sides[i].read),
                            pcts(sides[i].update),
                            sides[i].readsPerSecond(),
                            sides[i].failed,
                            sides[i].notFound));
                }
            });
            b.append("\n| mix | read p95 Thermocline / alone | read p99 Thermocline / alone |\n|---|---|---|\n");
            equal.forEach((mix, sides) -> b.append(String.format(
                    "| %s | **%.3f** | %.3f |%n",
                    mix,
                    ms(sides[1].read, 95) / ms(sides[0].read, 95),
                    ms(sides[1].read, 99) / ms(sides[0].read, 99))));
        }
        if (!ceiling.isEmpty()) {
            b.append("\n### Ceiling: the same archive uncapped, its files in the page cache\n\n");
            b.append(
                    "| mix | uncapped archive ops/s | Thermocline (capped archive) ops/s | Thermocline / uncapped |\n|---|---|---|---|\n");
            ceiling.forEach((mix, side) -> {
                Side[] st = steady.get(mix);
                double t = st == null ? Double.NaN : st[1].opsPerSecond();
                b.append(String.format(
                        "| %s | %.0f | %.0f | **%.2f** |%n", mix, side.opsPerSecond(), t, t / side.opsPerSecond()));
            });
        }
        if (!adoption.isEmpty()) {
            b.append(String.format(
                    "%n### Adoption (%s mix, from a cold archive; Thermocline from an empty fast tier)%n%n",
                    s.adoptionMix().name()));
            b.append(
                    "![ops/s over time](tiering-adoption.png)\n\n| side | first 10 s ops/s | last 30 s ops/s | whole run ops/s |\n|---|---|---|---|\n");
            adoption.forEach((side, r) -> b.append(String.format(
                    "| %s | %.0f | %.0f | %.0f |%n",
                    side,
                    mean(r.timeline(), 0, 10),
                    mean(r.timeline(), r.timeline().length - 31, r.timeline().length - 1),
                    r.opsPerSecond())));
        }
        b.append(
                "\n### Every run\n\n| cell | side | ops/s | read p50 / p95 / p99 ms | update p50 / p95 / p99 ms | insert p50 / p95 / p99 ms "
                        + "| failed | not found | archive reads/s | archive MB read/s | notes |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        rawRows.forEach(r -> b.append(r).append('\n'));
        return b.toString();
    }

    private static double mean(long[] series, int from, int to) {
        from = Math.max(0, from);
        to = Math.min(series.length, to);
        long sum = 0;
        for (int i = from; i < to; i++) {
            sum += series[i];
        }
        return to > from ? (double) sum / (to - from) : Double.NaN;
    }

    /** Replaces the generated part of the results file (or creates it), and writes the adoption plot beside it. */
    void write() throws IOException {
        Path out = s.out();
        Files.createDirectories(out.toAbsolutePath().getParent());
        RunLedger ledger = new RunLedger(out);
        ledger.append(ledgerRows());
        String text = Files.exists(out) ? Files.readString(out) : "# Tiering against a disk-bound archive\n";
        text = SECTION.replace(text, markdown());
        Files.writeString(out, RunLedger.SECTION.replace(text, RunLedger.markdown(ledger.rows())));
        if (!adoption.isEmpty()) {
            plot(out.toAbsolutePath().getParent().resolve("tiering-adoption.png"));
        }
    }

    /** This invocation's row per mix for the ledger of runs (steady ops/s both sides; ceiling and adoption where measured). */
    private List<RunLedger.Row> ledgerRows() {
        String date = Instant.now().truncatedTo(ChronoUnit.MINUTES).toString();
        String commit = commit();
        String load = loadAverage();
        List<RunLedger.Row> rows = new ArrayList<>();
        steady.forEach((mix, sides) -> {
            Side c = ceiling.get(mix);
            boolean adopted = mix.equals(s.adoptionMix().name()) && adoption.size() == 2;
            rows.add(new RunLedger.Row(
                    date,
                    commit,
                    s.quick() ? "quick" : "full",
                    mix,
                    s.window(),
                    s.adoption(),
                    sides[0].opsPerSecond(),
                    sides[1].opsPerSecond(),
                    c == null ? Double.NaN : c.opsPerSecond(),
                    adopted ? mean(adoption.get("archive alone").timeline(), 0, 10) : Double.NaN,
                    adopted ? mean(adoption.get("Thermocline").timeline(), 0, 10) : Double.NaN,
                    load));
        });
        return rows;
    }

    /** The checkout's commit, marked when it has uncommitted changes (a run of unlanded code). */
    private static String commit() {
        try {
            Process p = new ProcessBuilder("git", "describe", "--always", "--dirty")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            return p.waitFor() == 0 && !out.isEmpty() ? out : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private void plot(Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder()
                .width(900)
                .height(450)
                .title("Adoption: " + s.adoptionMix().name() + " mix, " + s.threads() + " threads, archive capped at "
                        + s.memoryMb() + " MB / " + s.iops() + " reads/s")
                .xAxisTitle("seconds since start")
                .yAxisTitle("operations per second")
                .build();
        chart.getStyler().setMarkerSize(0);
        adoption.forEach((side, r) -> {
            double[] x = new double[r.timeline().length];
            double[] y = new double[r.timeline().length];
            for (int i = 0; i < x.length; i++) {
                x[i] = i;
                y[i] = r.timeline()[i];
            }
            chart.addSeries(side, x, y).setMarker(SeriesMarkers.NONE);
        });
        BitmapEncoder.saveBitmap(chart, png.toString().replaceAll("\\.png$", ""), BitmapEncoder.BitmapFormat.PNG);
    }
}
