package io.thermocline.operator.proxy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import io.thermocline.operator.workflow.DrainHolderDependent;
import java.util.Map;

/** The proxy fleet; paused scales it to zero. A config change rolls it (config hash annotation). */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ProxyDeploymentDependent extends DrainHolderDependent<Deployment> {

    public static final String COMPONENT = "proxy";
    public static final String CONFIG_HASH = "thermocline.io/config-hash";
    /** Pod-template annotation: a rotated archive Secret restarts the pods that read it. */
    public static final String ARCHIVE_SECRET_HASH = "thermocline.io/archive-secret-hash";

    /**
     * A Terminating pod leaves the Service's endpoints at once, but every node's kube-proxy (and a cloud load balancer) takes
     * a moment to stop sending it new connections; the preStop hook keeps the proxy serving that long before SIGTERM.
     */
    static final int ENDPOINTS_GONE_SECONDS = 5;
    /**
     * A proxy out of service fails at once with every other (they share the tiers), which empties the Service: it stays
     * ready, degraded, through an election of a tier that had a primary (ProxyServer.readiness), and is taken out only
     * after 4 failed checks 5 s apart, so nothing short-lived (a planned step-down, a slow check) takes the fleet out.
     */
    static final int READINESS_PERIOD_SECONDS = 5;

    static final int READINESS_FAILURES = 4;
    /** What SIGTERM may still need after the hook: the requests in flight (the drain timeout), then closing, with a margin. */
    private static final long CLOSE_MARGIN_SECONDS = 10;

    static long terminationGracePeriodSeconds() {
        return ENDPOINTS_GONE_SECONDS + DataPlaneConfig.proxyDrainTimeout().toSeconds() + CLOSE_MARGIN_SECONDS;
    }

    public ProxyDeploymentDependent() {
        super(Deployment.class);
    }

    @Override
    protected Deployment desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        Container proxy = DataPlaneContainer.container(desired, "proxy", desired.spec().proxy.resources)
                .addNewPort()
                .withName("mongodb")
                .withContainerPort(ClusterLayout.MONGOD_PORT)
                .endPort()
                .addNewPort()
                .withName("peer")
                .withContainerPort(ClusterLayout.PEER_PORT)
                .endPort()
                .addNewPort()
                .withName("http")
                .withContainerPort(ClusterLayout.HTTP_PORT)
                .endPort()
                .withNewReadinessProbe()
                .withNewHttpGet()
                .withPath("/health/ready")
                .withPort(new IntOrString("http"))
                .endHttpGet()
                .withPeriodSeconds(READINESS_PERIOD_SECONDS)
                .withFailureThreshold(READINESS_FAILURES)
                .endReadinessProbe()
                // SIGTERM only once the pod is out of the Service's endpoints: the proxy closes its port at SIGTERM
                .withNewLifecycle()
                .withNewPreStop()
                .withNewExec()
                .withCommand("sleep", Integer.toString(ENDPOINTS_GONE_SECONDS))
                .endExec()
                .endPreStop()
                .endLifecycle()
                .withNewLivenessProbe()
                .withNewHttpGet()
                .withPath("/health/live")
                .withPort(new IntOrString("http"))
                .endHttpGet()
                .withInitialDelaySeconds(10)
                .withPeriodSeconds(10)
                .endLivenessProbe()
                .build();
        return new DeploymentBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.proxy(), COMPONENT))
                .withNewSpec()
                .withReplicas(desired.paused() ? 0 : desired.spec().proxy.replicas)
                .withNewSelector()
                .withMatchLabels(layout.selector(COMPONENT))
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(layout.labels(COMPONENT))
                .withAnnotations(
                        Map.of(CONFIG_HASH, desired.configHash(), ARCHIVE_SECRET_HASH, desired.archiveSecretHash()))
                .endMetadata()
                .withSpec(DataPlaneContainer.podSpec(desired, proxy, desired.spec().proxy, COMPONENT)
                        .withTerminationGracePeriodSeconds(terminationGracePeriodSeconds())
                        .build())
                .endTemplate()
                .endSpec()
                .build();
    }
}
