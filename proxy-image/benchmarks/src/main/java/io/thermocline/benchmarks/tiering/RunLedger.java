package io.thermocline.benchmarks.tiering;

import io.thermocline.benchmarks.GeneratedSection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every invocation's ratios, kept across invocations: one headline needs several runs from a cold start, and a
 * run takes most of 20 minutes here, so each invocation appends its rows to a ledger ({@code tiering-runs.tsv}
 * beside the results file) and the results file's "runs per cell" table is rebuilt from all of them, with the
 * spread and the worst run as the headline. A cell is a mode, a mix, a hot window and an adoption length: runs
 * with other settings are not pooled.
 */
final class RunLedger {
    /** Where the table stands in the results file, apart from the latest run's own generated section. */
    static final GeneratedSection SECTION = new GeneratedSection("TieringBenchmark, runs per cell");

    private static final String HEADER =
            "date\tcommit\tmode\tmix\twindow\tadoption s\talone ops/s\tThermocline ops/s\tratio\tceiling ops/s"
                    + "\tadoption first 10 s alone\tadoption first 10 s Thermocline\tload average";

    /** One mix of one invocation. Ceiling and adoption columns are NaN where the invocation did not measure them. */
    record Row(
            String date,
            String commit,
            String mode,
            String mix,
            String window,
            int adoption,
            double alone,
            double thermocline,
            double ceiling,
            double adoptionAlone,
            double adoptionThermocline,
            String load) {
        double ratio() {
            return thermocline / alone;
        }

        String cell() {
            return mode + " | " + mix + " | " + window + " | " + adoption;
        }

        String tsv() {
            return String.join(
                    "\t",
                    date,
                    commit,
                    mode,
                    mix,
                    window,
                    Integer.toString(adoption),
                    num(alone),
                    num(thermocline),
                    String.format(Locale.ROOT, "%.3f", ratio()),
                    num(ceiling),
                    num(adoptionAlone),
                    num(adoptionThermocline),
                    load);
        }

        static Row parse(String line) {
            String[] f = line.split("\t", -1);
            return new Row(
                    f[0],
                    f[1],
                    f[2],
                    f[3],
                    f[4],
                    Integer.parseInt(f[5]),
                    Double.parseDouble(f[6]),
                    Double.parseDouble(f[7]),
                    Double.parseDouble(f[9]),
                    Double.parseDouble(f[10]),
                    Double.parseDouble(f[11]),
                    f[12]);
        }
    }

    private final Path file;

    RunLedger(Path resultsFile) {
        this.file = resultsFile.toAbsolutePath().resolveSibling("tiering-runs.tsv");
    }

    void append(List<Row> rows) throws IOException {
        if (!Files.exists(file)) {
            Files.writeString(file, HEADER + "\n");
        }
        StringBuilder b = new StringBuilder();
        rows.forEach(r -> b.append(r.tsv()).append('\n'));
        Files.writeString(file, b.toString(), StandardOpenOption.APPEND);
    }

    List<Row> rows() throws IOException {
        List<Row> rows = new ArrayList<>();
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file)) {
                if (!line.isBlank() && !line.startsWith("date\t")) {
                    rows.add(Row.parse(line));
                }
            }
        }
        return rows;
    }

    /** The table of every cell with runs: each run's ratio in order, the spread, and the worst ratio as the headline. */
    static String markdown(List<Row> rows) {
        Map<String, List<Row>> cells = new LinkedHashMap<>();
        rows.forEach(
                r -> cells.computeIfAbsent(r.cell(), k -> new ArrayList<>()).add(r));
        StringBuilder b = new StringBuilder();
        b.append(
                "| mode | mix | window | adoption s | runs | ratio per run (alone -> Thermocline ops/s) | spread | **worst (headline)** "
                        + "| Thermocline / ceiling | adoption first 10 s, Thermocline / alone |\n|---|---|---|---|---|---|---|---|---|---|\n");
        cells.forEach((cell, runs) -> {
            StringBuilder each = new StringBuilder();
            for (Row r : runs) {
                each.append(each.length() == 0 ? "" : "; ")
                        .append(String.format(
                                Locale.ROOT,
                                "%.2f (%.0f -> %.0f, %s)",
                                r.ratio(),
                                r.alone(),
                                r.thermocline(),
                                r.date()));
            }
            Row worst =
                    runs.stream().min(Comparator.comparingDouble(Row::ratio)).orElseThrow();
            Row best = runs.stream().max(Comparator.comparingDouble(Row::ratio)).orElseThrow();
            String ceilings = runs.stream()
                    .filter(r -> !Double.isNaN(r.ceiling()))
                    .map(r -> String.format(Locale.ROOT, "%.2f", r.thermocline() / r.ceiling()))
                    .reduce((x, y) -> x + "; " + y)
                    .orElse("-");
            String adoptions = runs.stream()
                    .filter(r -> !Double.isNaN(r.adoptionAlone()))
                    .map(r -> String.format(Locale.ROOT, "%.2f", r.adoptionThermocline() / r.adoptionAlone()))
                    .reduce((x, y) -> x + "; " + y)
                    .orElse("-");
            b.append(String.format(
                    Locale.ROOT,
                    "| %s | %d | %s | %.2f-%.2f | **%.2f** | %s | %s |%n",
                    cell,
                    runs.size(),
                    each,
                    worst.ratio(),
                    best.ratio(),
                    worst.ratio(),
                    ceilings,
                    adoptions));
        });
        return b.toString();
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "NaN" : String.format(Locale.ROOT, "%.0f", v);
    }
}
