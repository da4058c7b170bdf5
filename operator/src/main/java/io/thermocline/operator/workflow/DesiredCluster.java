package io.thermocline.operator.workflow;

import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.fasttier.tls.FastTierTls;
import io.thermocline.operator.layout.ClusterLayout;

/**
 * Everything the dependents need beyond the spec, decided once per reconcile by the
 * reconciler (after probing the archive) and handed to them through the workflow context.
 */
public record DesiredCluster(
        ClusterLayout layout,
        ThermoclineClusterSpec spec,
        String dataPlaneImage,
        String fastTierVersion,
        int fastTierReplicas,
        String fastTierClaimSize,
        String configYaml,
        String configHash,
        String archiveSecretHash,
        String warmerJobName,
        String operatorNamespace,
        boolean feederStopped,
        FastTierTls tls) {

    /** Without fast-tier TLS. */
    public DesiredCluster(ClusterLayout layout, ThermoclineClusterSpec spec, String dataPlaneImage, String fastTierVersion,
            int fastTierReplicas, String fastTierClaimSize, String configYaml, String configHash, String archiveSecretHash,
            String warmerJobName, String operatorNamespace, boolean feederStopped) {
        this(layout, spec, dataPlaneImage, fastTierVersion, fastTierReplicas, fastTierClaimSize, configYaml, configHash,
                archiveSecretHash, warmerJobName, operatorNamespace, feederStopped, FastTierTls.OFF);
    }

    private static final String KEY = DesiredCluster.class.getName();

    public String mongodImage() {
        return spec.fastTier.imageRepository + ":" + fastTierVersion;
    }

    public boolean paused() {
        return spec.paused;
    }

    /** Paused, and the feeder has mirrored every write made before the proxy stopped: only then is it scaled to 0. */
    public boolean feederStopped() {
        return feederStopped;
    }

    public void putInto(Context<ThermoclineCluster> context) {
        context.managedWorkflowAndDependentResourceContext().put(KEY, this);
    }

    public static DesiredCluster from(Context<ThermoclineCluster> context) {
        return context.managedWorkflowAndDependentResourceContext().getMandatory(KEY, DesiredCluster.class);
    }
}
