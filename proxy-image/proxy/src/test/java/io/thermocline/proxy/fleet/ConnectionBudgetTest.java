package io.thermocline.proxy.fleet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class ConnectionBudgetTest {

    @ParameterizedTest
    @CsvSource({"100,1", "100,3", "7,3", "2,3", "1,1", "64,5"})
    void sharesOfTheLiveReplicasAddUpToTheBudgetExactly(int budget, int replicas) {
        List<String> live = IntStream.range(0, replicas).mapToObj(i -> "proxy-" + i).toList();
        int sum = live.stream().mapToInt(id -> ConnectionBudget.share(budget, live, id)).sum();
        assertThat(sum).isEqualTo(budget);
        live.forEach(id -> assertThat(ConnectionBudget.share(budget, live, id)).isBetween(budget / replicas, budget / replicas + 1));
    }

    @ParameterizedTest(name = "budget {0}, limit {1}, share {2}, others hold {3}, agreed {4} -> {5}")
    @CsvSource({
            // shrinking never waits
            "100, 50, 34, 50, false, 34",
            "100, 50, 34, 100, true, 34",
            // growing waits until every live replica sees the same replicas
            "100, 34, 50, 34, false, 34",
            // and takes only what the others do not hold, until they have shrunk
            "100, 0, 33, 100, true, 0",
            "100, 0, 33, 80, true, 20",
            "100, 20, 33, 67, true, 33",
            // never below the current limit while waiting for room
            "100, 20, 33, 90, true, 20",
    })
    void shrinkAtOnceGrowOnlyIntoWhatIsFree(int budget, int current, int share, int othersHeld, boolean agreed, int expected) {
        assertThat(ConnectionBudget.next(budget, current, share, othersHeld, agreed)).isEqualTo(expected);
    }

    @Test
    void aReplicaAloneTakesTheWholeBudget() {
        assertThat(ConnectionBudget.share(100, List.of("proxy-0"), "proxy-0")).isEqualTo(100);
        assertThat(ConnectionBudget.next(100, 0, 100, 0, true)).isEqualTo(100);
    }
}
