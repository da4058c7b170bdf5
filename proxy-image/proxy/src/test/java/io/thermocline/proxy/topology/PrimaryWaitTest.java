package io.thermocline.proxy.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** While a tier is down, a request waits for its primary briefly instead of the whole selection timeout. */
class PrimaryWaitTest {

    private static Duration wait(long timeoutMs, Long unreachableMs) {
        return OutOfService.primaryWait(
                Duration.ofMillis(timeoutMs), Optional.ofNullable(unreachableMs).map(Duration::ofMillis));
    }

    @Test
    void theFullTimeoutUntilNoMemberHasAnsweredForTheConfirmationThenTheOutageWait() {
        assertThat(wait(30_000, null)).as("a member answers").isEqualTo(Duration.ofSeconds(30));
        assertThat(wait(30_000, 500L)).as("just lost: maybe an election").isEqualTo(Duration.ofSeconds(30));
        assertThat(wait(30_000, TierMonitor.OUTAGE_CONFIRMED.toMillis()))
                .as("down")
                .isEqualTo(OutOfService.OUTAGE_WAIT);
        assertThat(wait(30_000, 600_000L)).isEqualTo(OutOfService.OUTAGE_WAIT);
        assertThat(wait(200, 600_000L)).as("never longer than asked").isEqualTo(Duration.ofMillis(200));
    }
}
