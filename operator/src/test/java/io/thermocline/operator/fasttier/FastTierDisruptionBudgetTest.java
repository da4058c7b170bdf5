package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class FastTierDisruptionBudgetTest {

    /** A voluntary eviction may never take the majority: with 1 or 2 members none may go. */
    @ParameterizedTest(name = "{0} members: {1} may be evicted")
    @CsvSource({"1,0", "2,0", "3,1", "4,1", "5,2", "6,2", "7,3"})
    void evictionsLeaveAMajority(int members, int maxUnavailable) {
        assertThat(FastTierDisruptionBudgetDependent.maxUnavailable(members)).isEqualTo(maxUnavailable);
    }
}
