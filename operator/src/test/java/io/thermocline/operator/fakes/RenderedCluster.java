package io.thermocline.operator.fakes;

import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.fasttier.tls.FastTierTls;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import io.thermocline.operator.workflow.DesiredCluster;

/**
 * The desired state a rendering test starts from: the spec's data-plane config rendered as the workflow renders it, with
 * fixed values for what the workflow would learn (image {@code thermocline:test}, MongoDB 7.0.14, 3 members of 10Gi, no
 * archive Secret hash yet, no operator namespace, the feeder running).
 */
public final class RenderedCluster {

    private RenderedCluster() {}

    public static DesiredCluster desired(ClusterLayout layout, ThermoclineClusterSpec spec) {
        return desired(layout, spec, "10Gi", FastTierTls.OFF);
    }

    public static DesiredCluster desired(ClusterLayout layout, ThermoclineClusterSpec spec, FastTierTls tls) {
        return desired(layout, spec, "10Gi", tls);
    }

    /** With each member's volume of {@code claimSize}. */
    public static DesiredCluster desired(
            ClusterLayout layout, ThermoclineClusterSpec spec, String claimSize, FastTierTls tls) {
        String yaml = DataPlaneConfig.toYaml(spec, layout);
        return new DesiredCluster(
                layout,
                spec,
                "thermocline:test",
                "7.0.14",
                3,
                claimSize,
                yaml,
                ContentHash.of(yaml),
                "none",
                DataPlaneConfig.warmerJobName(spec, layout),
                null,
                false,
                tls);
    }
}
