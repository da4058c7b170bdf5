package io.thermocline.operator.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.operator.api.v1alpha1.ClusterMode;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The starting mode of a cluster without spec.mode (issue 44 item 3), as a table. */
@Timeout(10)
class StartingModeTest {

    private static final List<String> ORDERS = List.of("shop.orders");

    @Test
    void onlyAnArchiveKnownToHoldNothingToCompareStartsTiered() {
        record Case(List<String> tiered, Optional<List<String>> holding, ClusterMode expected, String reasonSays) {
        }
        List<Case> cases = List.of(
                new Case(ORDERS, Optional.of(ORDERS), ClusterMode.SHADOW, "already held documents in shop.orders"),
                new Case(ORDERS, Optional.empty(), ClusterMode.SHADOW, "could not be read"),
                new Case(ORDERS, Optional.of(List.of()), ClusterMode.TIERED, "were empty"),
                new Case(List.of(), Optional.empty(), ClusterMode.TIERED, "no collection is tiered"),
                new Case(List.of("a.b", "a.c", "a.d", "a.e", "a.f"), Optional.of(List.of("a.b", "a.c", "a.d", "a.e", "a.f")),
                        ClusterMode.SHADOW, "a.b, a.c, a.d and 2 more"));
        for (Case c : cases) {
            StartingMode start = StartingMode.of(c.tiered(), c.holding());
            assertThat(start.mode()).as(c.toString()).isEqualTo(c.expected());
            assertThat(start.reason()).as(c.toString()).contains(c.reasonSays()).contains("spec.mode is unset");
        }
    }

    @Test
    void aShadowStartSaysHowToCutOver() {
        assertThat(StartingMode.of(ORDERS, Optional.of(ORDERS)).reason()).contains("set spec.mode: tiered");
        assertThat(StartingMode.of(ORDERS, Optional.empty()).reason()).contains("set spec.mode: tiered");
    }
}
