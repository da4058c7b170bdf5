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
    private static final String ROOT = "root@admin";
    private static final String ALICE = "alice@admin";

    /** Issue 25 item 6: logging in as oneself does not clear the failures at another user from the same address. */
    @Test
    void aSuccessAtOneUserDoesNotClearTheFailuresAtAnother() {
        for (int i = 0; i < 3; i++) {
            throttle.failed(attacker, ROOT);
        }
        throttle.succeeded(attacker, ALICE);
        assertThat(throttle.failures(attacker, ROOT)).isEqualTo(3);
        assertThat(throttle.admit(attacker, ROOT)).isEqualTo(Duration.ofMillis(400));
    }

    /** Issue 25 item 6: one client's failures at root do not delay another user's login from the same address. */
    @Test
    void failuresAtOneUserDoNotDelayAnotherUsersLoginFromTheSameAddress() {
        for (int i = 0; i < 5; i++) {
            throttle.failed(attacker, ROOT);
        }
        assertThat(throttle.admit(attacker, ALICE)).isZero();
        assertThat(throttle.admit(attacker, ROOT)).isPositive();
    }

    @Test
    void theDelayDoublesWithEachFailureUpToTheMaximumAndASuccessClearsIt() throws Exception {
        assertThat(throttle.admit(attacker, ROOT)).isZero();
        throttle.failed(attacker, ROOT);
        assertThat(throttle.admit(attacker, ROOT)).isEqualTo(Duration.ofMillis(100));
        for (int i = 0; i < 3; i++) {
            throttle.failed(attacker, ROOT);
        }
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertThat(throttle.admit(attacker, ROOT)).isZero(); // the wait after the 4th failure is over
        throttle.failed(attacker, ROOT); // 5th: 1.6 s, capped at 1 s
        assertThat(throttle.admit(attacker, ROOT)).isEqualTo(Duration.ofSeconds(1));
        throttle.succeeded(attacker, ROOT);
        assertThat(throttle.admit(attacker, ROOT)).isZero();
        assertThat(throttle.admit(InetAddress.getByName("10.0.0.9"), ROOT)).isZero();
    }

    @Test
    void concurrentAttemptsFromOneAddressAreSpacedOutNotLetThroughTogether() {
        for (int i = 0; i < 3; i++) {
            throttle.failed(attacker, ROOT); // delay 400 ms
        }
        Duration first = throttle.admit(attacker, ROOT);
        Duration second = throttle.admit(attacker, ROOT);
        Duration third = throttle.admit(attacker, ROOT);
        assertThat(second.minus(first)).isEqualTo(Duration.ofMillis(400));
        assertThat(third.minus(second)).isEqualTo(Duration.ofMillis(400));
    }

    @Test
    void failuresAreForgottenAfterAQuietPeriod() {
        throttle.failed(attacker, ROOT);
        now.addAndGet(Duration.ofMinutes(11).toNanos());
        assertThat(throttle.admit(attacker, ROOT)).isZero();
        throttle.failed(attacker, ROOT);
        assertThat(throttle.failures(attacker, ROOT)).isEqualTo(1);
    }
}
