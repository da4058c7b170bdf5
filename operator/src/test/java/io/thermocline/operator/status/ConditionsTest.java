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
        List<Condition> first = Conditions.merge(
                null,
                List.of(Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "0/2 proxy replicas ready")),
                1,
                T0);
        assertThat(first.get(0).getLastTransitionTime()).isEqualTo("2026-01-01T10:00:00Z");

        List<Condition> sameStatusNewMessage = Conditions.merge(
                first,
                List.of(Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "1/2 proxy replicas ready")),
                1,
                T1);
        assertThat(sameStatusNewMessage.get(0).getLastTransitionTime()).isEqualTo("2026-01-01T10:00:00Z");
        assertThat(sameStatusNewMessage.get(0).getMessage()).isEqualTo("1/2 proxy replicas ready");

        List<Condition> flipped = Conditions.merge(
                sameStatusNewMessage,
                List.of(Observed.isTrue(ConditionType.ProxyReady, "Available", "2/2 proxy replicas ready")),
                2,
                T1);
        assertThat(flipped.get(0).getLastTransitionTime()).isEqualTo("2026-01-01T10:05:00Z");
        assertThat(flipped.get(0).getObservedGeneration()).isEqualTo(2L);
    }

    /** Each condition keeps its own transition time, whatever the order of the previous ones. */
    @Test
    void eachConditionIsMergedWithItsOwnPrevious() {
        List<Condition> before = Conditions.merge(
                null,
                List.of(
                        Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "0/2"),
                        Observed.isTrue(ConditionType.FeederHealthy, "Mirroring", "ok")),
                1,
                T0);
        List<Condition> after = Conditions.merge(
                before,
                List.of(
                        Observed.isTrue(ConditionType.FeederHealthy, "Mirroring", "ok"),
                        Observed.isTrue(ConditionType.ProxyReady, "Available", "2/2")),
                1,
                T1);
        assertThat(Conditions.find(after, ConditionType.FeederHealthy).getLastTransitionTime())
                .isEqualTo("2026-01-01T10:00:00Z");
        assertThat(Conditions.find(after, ConditionType.ProxyReady).getLastTransitionTime())
                .isEqualTo("2026-01-01T10:05:00Z");
        assertThat(Conditions.find(after, ConditionType.Ready)).isNull();
        assertThat(Conditions.find(null, ConditionType.Ready)).isNull();
    }

    /** A reconcile that fails midway replaces its one condition and keeps the others as they were. */
    @Test
    void replacingOneConditionKeepsTheOthers() {
        List<Condition> before = Conditions.merge(
                null,
                List.of(
                        Observed.isTrue(ConditionType.Ready, "AllComponentsReady", "ready"),
                        Observed.isTrue(ConditionType.ResourcesApplied, "Applied", "accepted")),
                1,
                T0);
        List<Condition> after = Conditions.replace(
                before,
                Observed.isFalse(ConditionType.ResourcesApplied, "ApiUnavailable", "the API server timed out"),
                2,
                T1);
        assertThat(after).extracting(Condition::getType).containsExactly("ResourcesApplied", "Ready");
        assertThat(Conditions.find(after, ConditionType.ResourcesApplied).getReason())
                .isEqualTo("ApiUnavailable");
        assertThat(Conditions.find(after, ConditionType.ResourcesApplied).getLastTransitionTime())
                .isEqualTo("2026-01-01T10:05:00Z");
        assertThat(Conditions.find(after, ConditionType.Ready)).isSameAs(before.get(0));
        assertThat(Conditions.replace(null, Observed.isTrue(ConditionType.Ready, "AllComponentsReady", "ready"), 1, T0))
                .hasSize(1);
    }
}
