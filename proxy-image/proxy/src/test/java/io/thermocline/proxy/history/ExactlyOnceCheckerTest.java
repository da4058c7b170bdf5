package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.history.ExactlyOnceChecker.Anomaly;
import io.thermocline.proxy.history.ExactlyOnceChecker.Attempt;
import io.thermocline.proxy.history.ExactlyOnceChecker.Counter;
import io.thermocline.proxy.history.ExactlyOnceChecker.Kind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The exactly-once checker on hand-made outcomes: each anomaly it must find, and what it must accept. */
class ExactlyOnceCheckerTest {

    private static List<Kind> kinds(List<Attempt> attempts, Map<String, Counter> finals) {
        return ExactlyOnceChecker.check(attempts, finals).stream().map(Anomaly::kind).toList();
    }

    @Test
    void acceptsOnceForAcknowledgedAndAtMostOnceForFailed() {
        List<Attempt> attempts = List.of(Attempt.acknowledged("a", "c", 1, 1), Attempt.failed("b", "c"), Attempt.failed("d", "c"));
        assertThat(kinds(attempts, Map.of("c", new Counter(2, List.of("a", "b"))))).isEmpty();
    }

    @Test
    void findsARetryThatRanTwice() {
        // the case: the reply said one change, the counter shows two
        List<Attempt> attempts = List.of(Attempt.acknowledged("a", "c", 1, 1));
        assertThat(kinds(attempts, Map.of("c", new Counter(2, List.of("a", "a"))))).containsExactly(Kind.DUPLICATE);
        assertThat(kinds(List.of(Attempt.failed("a", "c")), Map.of("c", new Counter(2, List.of("a", "a"))))).containsExactly(Kind.DUPLICATE);
    }

    @Test
    void findsALostWriteAWrongReplyAndATornStatement() {
        assertThat(kinds(List.of(Attempt.acknowledged("a", "c", 1, 1)), Map.of("c", new Counter(0, List.of())))).containsExactly(Kind.LOST);
        assertThat(kinds(List.of(Attempt.acknowledged("a", "c", 1, 0)), Map.of("c", new Counter(1, List.of("a")))))
                .containsExactly(Kind.WRONG_REPLY);
        assertThat(kinds(List.of(), Map.of("c", new Counter(3, List.of("a"))))).containsExactly(Kind.TORN);
    }
}
