package io.thermocline.security.authentication;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class LoginThrottleTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final LoginThrottle throttle = new LoginThrottle(Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofMinutes(10), now::get);
    private final InetAddress attacker = InetAddress.getLoopbackAddress();

    @Test
    void theDelayDoublesWithEachFailureUpToTheMaximumAndASuccessClearsIt() throws Exception {
        assertThat(throttle.admit(attacker)).isZero();
        throttle.failed(attacker);
        assertThat(throttle.admit(attacker)).isEqualTo(Duration.ofMillis(100));
        for (int i = 0; i < 3; i++) {
            throttle.failed(attacker);
        }
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertThat(throttle.admit(attacker)).isZero(); // the wait after the 4th failure is over
        throttle.failed(attacker); // 5th: 1.6 s, capped at 1 s
        assertThat(throttle.admit(attacker)).isEqualTo(Duration.ofSeconds(1));
        throttle.succeeded(attacker);
        assertThat(throttle.admit(attacker)).isZero();
        assertThat(throttle.admit(InetAddress.getByName("10.0.0.9"))).isZero();
    }

    @Test
    void concurrentAttemptsFromOneAddressAreSpacedOutNotLetThroughTogether() {
        for (int i = 0; i < 3; i++) {
            throttle.failed(attacker); // delay 400 ms
        }
        Duration first = throttle.admit(attacker);
        Duration second = throttle.admit(attacker);
        Duration third = throttle.admit(attacker);
        assertThat(second.minus(first)).isEqualTo(Duration.ofMillis(400));
        assertThat(third.minus(second)).isEqualTo(Duration.ofMillis(400));
    }

    @Test
    void failuresAreForgottenAfterAQuietPeriod() {
        throttle.failed(attacker);
        now.addAndGet(Duration.ofMinutes(11).toNanos());
        assertThat(throttle.admit(attacker)).isZero();
        throttle.failed(attacker);
        assertThat(throttle.failures(attacker)).isEqualTo(1);
    }
}
