package io.thermocline.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.kit.Clusters;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Events {@code kubectl describe} shows: one per condition that changed status, each sent once. */
@EnableKubernetesMockClient(crud = true)
@Timeout(60)
class TransitionEventsTest {

    private static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");
    private static final Instant T1 = Instant.parse("2026-01-01T10:05:00Z");

    KubernetesClient client;
    private ThermoclineCluster cluster;

    @BeforeEach
    void cluster() {
        cluster = Clusters.cluster("ns", "c");
        cluster.getMetadata().setUid("uid-1");
    }

    @Test
    void aConditionThatChangedStatusIsAnEventOnlyOnce() {
        List<Condition> before = Conditions.merge(
                null,
                List.of(
                        Observed.isTrue(ConditionType.FeederHealthy, "Mirroring", "ok"),
                        Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "0/2")),
                1,
                T0);
        List<Condition> after = Conditions.merge(
                before,
                List.of(
                        Observed.isFalse(ConditionType.FeederHealthy, "LagTooHigh", "lag 400 s"),
                        Observed.isFalse(ConditionType.ProxyReady, "ReplicasNotReady", "1/2"),
                        Observed.isTrue(ConditionType.Ready, "AllComponentsReady", "ready")),
                1,
                T1);

        TransitionEvents.record(client, cluster, before, after);
        TransitionEvents.record(client, cluster, before, after); // a reconcile redone after a failed status write

        assertThat(events())
                .extracting(Event::getReason, Event::getType, Event::getMessage)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(
                                "LagTooHigh", "Warning", "FeederHealthy is False: lag 400 s"),
                        org.assertj.core.groups.Tuple.tuple("AllComponentsReady", "Normal", "Ready is True: ready"));
        assertThat(events()).allSatisfy(e -> {
            assertThat(e.getInvolvedObject().getUid()).isEqualTo("uid-1");
            assertThat(e.getInvolvedObject().getName()).isEqualTo("c");
        });
    }

    @Test
    void theFirstStatusIsAnEventForEveryCondition() {
        List<Condition> first = Conditions.merge(
                null, List.of(Observed.isTrue(ConditionType.ArchiveReachable, "Reachable", "answers")), 1, T0);
        TransitionEvents.record(client, cluster, null, first);
        assertThat(events()).extracting(Event::getReason).containsExactly("Reachable");
    }

    @Test
    void aStepIsAnEventOncePerReasonOrIdentity() {
        TransitionEvents.once(client, cluster, "DeletionWaitingForFeeder", "waiting", false);
        TransitionEvents.once(client, cluster, "DeletionWaitingForFeeder", "waiting again", false);
        TransitionEvents.once(client, cluster, "MemberRestarted", "c-fast-2", true, "MemberRestarted/c-fast-2");
        TransitionEvents.once(client, cluster, "MemberRestarted", "c-fast-1", true, "MemberRestarted/c-fast-1");
        TransitionEvents.once(client, cluster, "MemberRestarted", "c-fast-1 again", true, "MemberRestarted/c-fast-1");
        assertThat(events())
                .extracting(Event::getReason, Event::getMessage, Event::getType)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("DeletionWaitingForFeeder", "waiting", "Warning"),
                        org.assertj.core.groups.Tuple.tuple("MemberRestarted", "c-fast-2", "Normal"),
                        org.assertj.core.groups.Tuple.tuple("MemberRestarted", "c-fast-1", "Normal"));
    }

    private List<Event> events() {
        return client.v1().events().inNamespace("ns").list().getItems();
    }
}
