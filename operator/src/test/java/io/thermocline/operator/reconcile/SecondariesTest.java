package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.api.reconciler.ResourceOperations;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.dependent.managed.ManagedWorkflowAndDependentResourceContext;
import io.javaoperatorsdk.operator.processing.event.EventSourceRetriever;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.status.ClusterHealth;
import io.thermocline.operator.status.ClusterHealth.Replicas;
import io.thermocline.operator.tiering.TieringPolling;
import io.thermocline.operator.tiering.TieringSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the report reads of the informer caches (a fake Context) and of the pods (the mock API server). */
@EnableKubernetesMockClient(crud = true)
@Timeout(60)
class SecondariesTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");
    private static final String HASH = "abc123";

    KubernetesClient client;

    /** The informer caches as JOSDK hands them to a reconcile: only the reads the reconciler makes answer. */
    private final class CachedSecondaries implements Context<ThermoclineCluster> {
        final List<Object> held = new ArrayList<>();
        TieringSnapshot tiering;

        @Override
        public <R> Set<R> getSecondaryResources(Class<R> kind, boolean deduplicate) {
            return getSecondaryResourcesAsStream(kind, deduplicate).collect(Collectors.toSet());
        }

        @Override
        public <R> Stream<R> getSecondaryResourcesAsStream(Class<R> kind, boolean deduplicate) {
            return held.stream().filter(kind::isInstance).map(kind::cast);
        }

        @Override
        public <R> Optional<R> getSecondaryResource(Class<R> kind, String eventSourceName) {
            return kind == TieringSnapshot.class && TieringPolling.NAME.equals(eventSourceName)
                    ? Optional.ofNullable(kind.cast(tiering))
                    : Optional.empty();
        }

        @Override
        public KubernetesClient getClient() {
            return client;
        }

        @Override
        public Optional<RetryInfo> getRetryInfo() {
            throw new AssertionError("the report does not read the retry");
        }

        @Override
        public ControllerConfiguration<ThermoclineCluster> getControllerConfiguration() {
            throw new AssertionError("the report does not read the configuration");
        }

        @Override
        public ManagedWorkflowAndDependentResourceContext managedWorkflowAndDependentResourceContext() {
            throw new AssertionError("the report runs no workflow");
        }

        @Override
        public EventSourceRetriever<ThermoclineCluster> eventSourceRetriever() {
            throw new AssertionError("the report reads no event source");
        }

        @Override
        public ResourceOperations<ThermoclineCluster> resourceOperations() {
            throw new AssertionError("the report writes nothing");
        }

        @Override
        public ExecutorService getWorkflowExecutorService() {
            throw new AssertionError("the report runs no workflow");
        }

        @Override
        public ThermoclineCluster getPrimaryResource() {
            throw new AssertionError("the report is handed its cluster");
        }

        @Override
        public IndexedResourceCache<ThermoclineCluster> getPrimaryCache() {
            throw new AssertionError("the report reads no other cluster");
        }

        @Override
        public boolean isNextReconciliationImminent() {
            throw new AssertionError("not asked");
        }

        @Override
        public boolean isPrimaryResourceDeleted() {
            throw new AssertionError("not asked");
        }

        @Override
        public boolean isPrimaryResourceFinalStateUnknown() {
            throw new AssertionError("not asked");
        }
    }

    private final CachedSecondaries context = new CachedSecondaries();
    private final List<String> askedProxies = new ArrayList<>();

    private StatusReport.Seen seen(ThermoclineClusterSpec spec, String warmerJob) {
        return Secondaries.seen(
                context,
                LAYOUT,
                spec,
                (host, port) -> {
                    askedProxies.add(host + ":" + port);
                    return Optional.of("no primary known for the fast tier");
                },
                warmerJob);
    }

    private static ThermoclineClusterSpec spec() {
        return Clusters.cluster("shop", "orders").getSpec();
    }

    private static Deployment deployment(String name, Integer ready) {
        return new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewStatus()
                .withReadyReplicas(ready)
                .endStatus()
                .build();
    }

    private static StatefulSet fastTier(Integer ready) {
        return new StatefulSetBuilder()
                .withNewMetadata()
                .withName(LAYOUT.fastTier())
                .endMetadata()
                .withNewSpec()
                .withReplicas(3)
                .withNewTemplate()
                .withNewMetadata()
                .withAnnotations(Map.of(FastTierStatefulSetDependent.TEMPLATE_HASH, HASH))
                .endMetadata()
                .endTemplate()
                .endSpec()
                .withNewStatus()
                .withReadyReplicas(ready)
                .endStatus()
                .build();
    }

    private void pod(String name, String component, String templateHash, String ip, boolean ready) {
        client.pods()
                .inNamespace("shop")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withLabels(LAYOUT.selector(component))
                        .withAnnotations(
                                templateHash == null
                                        ? Map.of()
                                        : Map.of(FastTierStatefulSetDependent.TEMPLATE_HASH, templateHash))
                        .endMetadata()
                        .withNewStatus()
                        .withPodIP(ip)
                        .addNewCondition()
                        .withType("Ready")
                        .withStatus(ready ? "True" : "False")
                        .endCondition()
                        .endStatus()
                        .build())
                .create();
    }

    private static Job job(String name, String type, String reason, String message) {
        JobBuilder job = new JobBuilder().withNewMetadata().withName(name).endMetadata();
        return type == null
                ? job.build()
                : job.withNewStatus()
                        .addNewCondition()
                        .withType(type)
                        .withStatus("True")
                        .withReason(reason)
                        .withMessage(message)
                        .endCondition()
                        .endStatus()
                        .build();
    }

    @Test
    void nothingCreatedYetIsNothingSeen() {
        StatusReport.Seen seen = seen(spec(), null);
        assertThat(seen).isEqualTo(new StatusReport.Seen(null, null, null, null, null, null));
    }

    @Test
    void workloadsAreReadyOverWantedFromTheCaches() {
        context.held.addAll(List.<HasMetadata>of(
                fastTier(2),
                deployment(LAYOUT.proxy(), 2),
                deployment(LAYOUT.feeder(), null),
                deployment("other-proxy", 0)));
        context.tiering = new TieringSnapshot(3L, true, 1L, 2L);
        pod(LAYOUT.fastTier() + "-0", FastTierStatefulSetDependent.COMPONENT, HASH, "10.0.0.1", true);
        pod(LAYOUT.fastTier() + "-1", FastTierStatefulSetDependent.COMPONENT, "old", "10.0.0.2", true);
        pod(LAYOUT.fastTier() + "-2", FastTierStatefulSetDependent.COMPONENT, null, null, false);

        StatusReport.Seen seen = seen(spec(), null);

        assertThat(seen.fastTier()).isEqualTo(new Replicas(3, 2));
        assertThat(seen.membersUpToDate())
                .as("one pod runs the current template")
                .isEqualTo(1);
        assertThat(seen.proxy()).isEqualTo(new Replicas(2, 2));
        assertThat(seen.feeder()).as("no ready count yet: 0 of 1").isEqualTo(new Replicas(1, 0));
        assertThat(seen.tiering()).isSameAs(context.tiering);
        assertThat(askedProxies)
                .as("every proxy is ready: none is asked why not")
                .isEmpty();
    }

    @Test
    void aStatefulSetWithoutStatusHasNoMemberReady() {
        StatefulSet noStatus = fastTier(null);
        noStatus.setStatus(null);
        context.held.add(noStatus);
        assertThat(seen(spec(), null).fastTier()).isEqualTo(new Replicas(3, 0));
        assertThat(seen(spec(), null).membersUpToDate()).isZero();
    }

    @Test
    void aProxyNotReadyIsAskedWhyUnlessPaused() {
        context.held.add(deployment(LAYOUT.proxy(), 1));
        pod(LAYOUT.proxy() + "-a", ProxyDeploymentDependent.COMPONENT, null, "10.0.0.7", false);

        Replicas proxy = seen(spec(), null).proxy();
        assertThat(proxy.ready()).isEqualTo(1);
        assertThat(proxy.desired()).isEqualTo(2);
        assertThat(proxy.notReadyCause()).isEqualTo("pod orders-proxy-a: no primary known for the fast tier");

        askedProxies.clear();
        ThermoclineClusterSpec paused = spec();
        paused.paused = true;
        assertThat(seen(paused, null).proxy().notReadyCause()).isNull();
        assertThat(askedProxies).isEmpty();

        context.held.set(0, deployment(LAYOUT.proxy(), 2));
        assertThat(seen(spec(), null).proxy().notReadyCause()).isNull();
        assertThat(askedProxies).as("all ready: none asked").isEmpty();
    }

    @Test
    void theWarmerIsTheNamedJobAndHowItEnded() {
        context.held.addAll(List.of(
                job("orders-warmer-old", "Failed", "BackoffLimitExceeded", "old windows"),
                job("orders-warmer-run", null, null, null),
                job("orders-warmer-done", "Complete", null, null),
                job("orders-warmer-failed", "Failed", "BackoffLimitExceeded", "Job has reached the backoff limit"),
                job("orders-warmer-bare", "Failed", "DeadlineExceeded", null)));

        assertThat(seen(spec(), "orders-warmer-run").warmer())
                .isEqualTo(new ClusterHealth.Warmer("orders-warmer-run", false, null));
        assertThat(seen(spec(), "orders-warmer-done").warmer())
                .isEqualTo(new ClusterHealth.Warmer("orders-warmer-done", true, null));
        assertThat(seen(spec(), "orders-warmer-failed").warmer())
                .isEqualTo(new ClusterHealth.Warmer(
                        "orders-warmer-failed", false, "BackoffLimitExceeded: Job has reached the backoff limit"));
        assertThat(seen(spec(), "orders-warmer-bare").warmer().failure()).isEqualTo("DeadlineExceeded");
        assertThat(seen(spec(), "orders-warmer-new").warmer())
                .as("not created yet")
                .isNull();
        assertThat(seen(spec(), null).warmer()).as("none wanted").isNull();
    }
}
