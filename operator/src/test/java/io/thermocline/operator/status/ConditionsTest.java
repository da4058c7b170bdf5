package io.thermocline.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConditionsTest {

    private static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");
    private static final Instant T1 = Instant.parse("2026-01-01T10:05:00Z");

    @Test
    void transitionTimeMovesOnlyWhenTheStatusChanges() {
        List<Condition> first = Conditions.merge(null,
                List.of(Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "0/2 proxy replicas ready")), 1, T0);
        assertThat(first.get(0).getLastTransitionTime()).isEqualTo("2026-01-01T10:00:00Z");

        List<Condition> sameStatusNewMessage = Conditions.merge(first,
                List.of(Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "1/2 proxy replicas ready")), 1, T1);
        assertThat(sameStatusNewMessage.get(0).getLastTransitionTime()).isEqualTo("2026-01-01T10:00:00Z");
        assertThat(sameStatusNewMessage.get(0).getMessage()).isEqualTo("1/2 proxy replicas ready");

        List<Condition> flipped = Conditions.merge(sameStatusNewMessage,
                List.of(Observed.isTrue(ConditionType.ProxyReady, "Available", "2/2 proxy replicas ready")), 2, T1);
        assertThat(flipped.get(0).getLastTransitionTime()).isEqualTo("2026-01-01T10:05:00Z");
        assertThat(flipped.get(0).getObservedGeneration()).isEqualTo(2L);
    }
}
