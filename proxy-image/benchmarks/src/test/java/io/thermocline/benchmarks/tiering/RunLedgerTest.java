package io.thermocline.benchmarks.tiering;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The headline of a cell is its worst run, runs of other settings are not pooled, and the ledger survives invocations. */
@Timeout(10)
class RunLedgerTest {

    @Test
    void theWorstRunOfACellIsItsHeadlineAndOtherSettingsAreOtherCells(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("tiering.md");
        new RunLedger(results)
                .append(List.of(row("concentrated", "120d", 819, 4324), row("store", "120d", 1160, 2183)));
        new RunLedger(results)
                .append(List.of(row("concentrated", "120d", 942, 1822), row("concentrated", "40d", 900, 3600)));

        List<RunLedger.Row> rows = new RunLedger(results).rows();
        assertThat(rows).hasSize(4);
        assertThat(Files.readString(dir.resolve("tiering-runs.tsv"))).startsWith("date\t");
        String table = RunLedger.markdown(rows);
        assertThat(table)
                .contains(
                        "| full | concentrated | 120d | 240 | 2 | 5.28 (819 -> 4324, d); 1.93 (942 -> 1822, d) | 1.93-5.28 | **1.93** |")
                .contains("| full | concentrated | 40d | 240 | 1 |")
                .contains("| full | store | 120d | 240 | 1 |");
    }

    @Test
    void theTableReplacesItsEarlierSelfAndLeavesTheRestOfTheFile() {
        String text = "# head\n" + RunLedger.SECTION.start() + "\nold\n" + RunLedger.SECTION.end() + "\ntail\n";
        String replaced = RunLedger.SECTION.replace(text, "new");
        assertThat(replaced)
                .isEqualTo(
                        "# head\n" + RunLedger.SECTION.start() + "\n\nnew\n\n" + RunLedger.SECTION.end() + "\ntail\n");
    }

    private static RunLedger.Row row(String mix, String window, double alone, double thermocline) {
        return new RunLedger.Row(
                "d", "c", "full", mix, window, 240, alone, thermocline, Double.NaN, Double.NaN, Double.NaN, "1 1 1");
    }
}
