package io.thermocline.proxy.server.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.wire.MessageBudget.Admission;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MessageAdmissionTest {

    private static final long MB = 1_000_000;
    /** floor 2 MB, a connection 100 MB, the process 200 MB. */
    private static final MessageMemoryLimits LIMITS =
            new MessageMemoryLimits(100 * MB, 200 * MB, 2 * MB, MessageMemoryLimits.DEFAULT_STALL_TIMEOUT);

    static Stream<Arguments> cases() {
        return Stream.of(
                // connection holds, of which this message, bytes more, process holds, logged in -> "admit", "defer" or
                // the refusal's words
                Arguments.of(0, 0, 1 * MB, 0, true, "admit"),
                Arguments.of(0, 0, 2 * MB, 500 * MB, true, "admit"), // within the floor whatever the process holds
                Arguments.of(1 * MB, 0, 1 * MB, 500 * MB, false, "admit"), // the floor before a login too
                Arguments.of(0, 0, 3 * MB, 0, false, "has not logged in"),
                Arguments.of(1 * MB, 0, 2 * MB, 0, false, "defer"),
                Arguments.of(1 * MB, 1 * MB, 2 * MB, 0, false, "has not logged in"),
                Arguments.of(0, 0, 100 * MB, 100 * MB, true, "admit"),
                Arguments.of(0, 0, 101 * MB, 0, true, "maxBufferedBytesPerConnection"),
                Arguments.of(60 * MB, 60 * MB, 41 * MB, 60 * MB, true, "maxBufferedBytesPerConnection"),
                Arguments.of(50 * MB, 0, 51 * MB, 50 * MB, true, "defer"),
                Arguments.of(0, 0, 50 * MB, 151 * MB, true, "proxy.maxBufferedBytes)"),
                // a frame whose own bytes are all the connection holds is refused, not left waiting for itself
                Arguments.of(3 * MB, 3 * MB, 50 * MB, 151 * MB, true, "proxy.maxBufferedBytes)"),
                Arguments.of(4 * MB, 3 * MB, 50 * MB, 151 * MB, true, "defer"),
                Arguments.of(0, 0, 50 * MB, 150 * MB, true, "admit"));
    }

    @ParameterizedTest(name = "held {0} (this message {1}) + {2}, process {3}, logged in {4}: {5}")
    @MethodSource("cases")
    void decidesByFloorLoginConnectionAndProcess(
            long connection, long message, long bytes, long process, boolean loggedIn, String expected) {
        Admission a = MessageAdmission.decide(connection, message, bytes, process, LIMITS, loggedIn);
        switch (expected) {
            case "admit" -> assertThat(a).isInstanceOf(Admission.Admitted.class);
            case "defer" -> assertThat(a).isInstanceOf(Admission.Deferred.class);
            default ->
                assertThat(a)
                        .isInstanceOfSatisfying(
                                Admission.Refused.class,
                                r -> assertThat(r.reason()).contains(expected));
        }
    }

    @Test
    void aConnectionGivesBackEverythingItHoldsWhenClosedAndNothingTwice() {
        MessageMemory process = new MessageMemory(LIMITS);
        AtomicBoolean loggedIn = new AtomicBoolean(true);
        ConnectionMemory a = process.open(loggedIn::get);
        ConnectionMemory b = process.open(loggedIn::get);
        assertThat(a.reserve(60 * MB, 0)).isInstanceOf(Admission.Admitted.class);
        assertThat(a.reserve(30 * MB, 0)).isInstanceOf(Admission.Admitted.class);
        assertThat(b.reserve(90 * MB, 0)).isInstanceOf(Admission.Admitted.class);
        assertThat(process.held()).isEqualTo(180 * MB);
        assertThat(b.reserve(15 * MB, 0)).as("b holds others: waits").isInstanceOf(Admission.Deferred.class);
        ConnectionMemory c = process.open(loggedIn::get);
        assertThat(c.reserve(30 * MB, 0)).as("the process is full").isInstanceOf(Admission.Refused.class);
        assertThat(c.reserve(1 * MB, 0)).as("the floor still is not").isInstanceOf(Admission.Admitted.class);
        a.release(30 * MB);
        a.close();
        a.release(60 * MB); // an answer that completes after the close
        assertThat(a.reserve(1, 0)).isInstanceOf(Admission.Refused.class);
        b.close();
        c.close();
        assertThat(process.held()).isZero();
        assertThat(process.refused())
                .as("c past the process budget; a after its close is not counted")
                .isEqualTo(1);
    }
}
