package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.AggregatedOperatorException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.api.reconciler.dependent.ReconcileResult;
import io.javaoperatorsdk.operator.processing.dependent.workflow.WorkflowReconcileResult;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.workflow.RefusedUpdates;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the API server refused is reported; anything else fails the reconcile (retried with backoff). */
@Timeout(30)
class ApiRejectionsTest {

    private static final KubernetesClientException INVALID = new KubernetesClientException(new StatusBuilder()
            .withCode(422)
            .withMessage("StatefulSet.apps \"c-fast\" is invalid: spec: Forbidden")
            .build());
    private static final KubernetesClientException UNAVAILABLE = new KubernetesClientException(
            new StatusBuilder().withCode(503).withMessage("etcd timeout").build());

    @Test
    void aRefusedObjectIsReportedByItsDependentAndTheApiServersMessage() {
        List<String> rejected = ApiRejections.reconcile(
                () -> errored(Map.of(
                        "fast-tier", new IllegalStateException("wrapped", INVALID),
                        "proxy", new KubernetesClientException("Bad Request", 400, null))),
                new RefusedUpdates());
        assertThat(rejected)
                .containsExactly(
                        "fast-tier: StatefulSet.apps \"c-fast\" is invalid: spec: Forbidden", "proxy: Bad Request");
    }

    @Test
    void anythingButARefusalFailsTheReconcile() {
        Map<String, Exception> errors = new LinkedHashMap<>();
        errors.put("fast-tier", INVALID);
        errors.put("proxy", UNAVAILABLE);
        assertThatThrownBy(() -> ApiRejections.reconcile(() -> errored(errors), new RefusedUpdates()))
                .isInstanceOfSatisfying(
                        AggregatedOperatorException.class,
                        e -> assertThat(e.getAggregatedExceptions()).containsOnlyKeys("fast-tier", "proxy"));
        assertThatThrownBy(() -> ApiRejections.reconcile(
                        () -> {
                            throw new AggregatedOperatorException(
                                    "failed", Map.of("feeder", new IllegalStateException("a bug")));
                        },
                        new RefusedUpdates()))
                .isInstanceOf(AggregatedOperatorException.class);
    }

    @Test
    void aRefusalThrownByTheWholeWorkflowIsReportedToo() {
        assertThat(ApiRejections.reconcile(
                        () -> {
                            throw new AggregatedOperatorException("failed", Map.of("config", INVALID));
                        },
                        new RefusedUpdates()))
                .containsExactly("config: StatefulSet.apps \"c-fast\" is invalid: spec: Forbidden");
        assertThat(ApiRejections.reconcile(() -> WorkflowReconcileResult.EMPTY, new RefusedUpdates()))
                .isEmpty();
    }

    private static WorkflowReconcileResult errored(Map<String, Exception> byName) {
        Map<DependentResource, Exception> errors = new LinkedHashMap<>();
        byName.forEach((name, error) -> errors.put(named(name), error));
        return new WorkflowReconcileResult() {
            @Override
            public Map<DependentResource, Exception> getErroredDependents() {
                return errors;
            }
        };
    }

    private static DependentResource<ConfigMap, ThermoclineCluster> named(String name) {
        return new DependentResource<>() {
            @Override
            public ReconcileResult<ConfigMap> reconcile(
                    ThermoclineCluster primary, Context<ThermoclineCluster> context) {
                throw new AssertionError("a test double read only for its name: never reconciled");
            }

            @Override
            public Class<ConfigMap> resourceType() {
                return ConfigMap.class;
            }

            @Override
            public String name() {
                return name;
            }
        };
    }
}
