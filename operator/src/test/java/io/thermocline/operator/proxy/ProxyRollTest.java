package io.thermocline.operator.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.fakes.RenderedCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.DesiredCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A proxy pod leaving (a roll, a scale-down, a node drain) refuses no connection: it leaves the Service's endpoints while it
 * still serves (preStop), then drains on SIGTERM within its grace period; and one fast-tier election does not take every
 * proxy out of the Service at once.
 */
@Timeout(10)
class ProxyRollTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("c", "ns");
    /** MongoDB's default electionTimeoutMillis, plus the heartbeat that notices the new primary. */
    private static final int ELECTION_SECONDS = 12;

    private final PodSpec pod = new ProxyDeploymentDependent()
            .desired(desired(), null)
            .getSpec()
            .getTemplate()
            .getSpec();
    private final Container proxy = pod.getContainers().get(0);

    @Test
    void theEndpointsGoBeforeSigtermAndTheDrainFitsTheGracePeriod() {
        assertThat(proxy.getLifecycle()).as("a preStop hook").isNotNull();
        assertThat(proxy.getLifecycle().getPreStop().getExec().getCommand())
                .containsExactly("sleep", Integer.toString(ProxyDeploymentDependent.ENDPOINTS_GONE_SECONDS));
        assertThat(ProxyDeploymentDependent.ENDPOINTS_GONE_SECONDS).isGreaterThanOrEqualTo(3);
        // the grace period runs from the deletion: the hook, then the proxy's own drain of the requests in flight
        assertThat(pod.getTerminationGracePeriodSeconds())
                .isGreaterThan(ProxyDeploymentDependent.ENDPOINTS_GONE_SECONDS
                        + DataPlaneConfig.proxyDrainTimeout().toSeconds());
    }

    @Test
    void aFastTierElectionDoesNotEmptyTheService() {
        Probe readiness = proxy.getReadinessProbe();
        assertThat(readiness.getHttpGet().getPath()).isEqualTo("/health/ready");
        int failures = readiness.getFailureThreshold() == null ? 3 : readiness.getFailureThreshold();
        // the first failed check can come right as the election starts: out after (failures - 1) periods at the soonest
        assertThat((failures - 1) * readiness.getPeriodSeconds())
                .as("seconds from the first failed check to leaving the Service")
                .isGreaterThan(ELECTION_SECONDS);
    }

    private static DesiredCluster desired() {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.archive.uriSecretRef = new SecretKeyRef("archive", null);
        CollectionSpec orders = new CollectionSpec();
        orders.database = "shop";
        orders.collection = "orders";
        orders.hotWindow = "30d";
        spec.collections.add(orders);
        return RenderedCluster.desired(LAYOUT, spec);
    }
}
