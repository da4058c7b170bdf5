package io.thermocline.operator.fasttier;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(10)
class FastTierDisruptionBudgetTest {

    /**
     * A voluntary eviction never takes the majority of 3 or more; 1 or 2 members have none to spare, and a budget of 0
     * would only block every node drain for good, so one may go at a time.
     */
    @ParameterizedTest(name = "{0} members: {1} may be evicted")
    @CsvSource({"1,1", "2,1", "3,1", "4,1", "5,2", "6,2", "7,3"})
    void evictionsLeaveAMajority(int members, int maxUnavailable) {
        assertThat(FastTierDisruptionBudgetDependent.maxUnavailable(members)).isEqualTo(maxUnavailable);
    }
}
