package io.thermocline.operator.observability;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.Map;

/**
 * A headless Service over one data-plane component's {@code /metrics} port, so Prometheus
 * (through the {@link ServiceMonitorDependent}, or the {@code prometheus.io/*} annotations of a
 * plain scrape config) finds every pod of the component, not one behind a virtual IP.
 */
public abstract class MetricsServiceDependent extends ClusterDependent<Service> {

    /** On every metrics Service: the ServiceMonitor selects by it. */
    public static final String SCRAPE_LABEL = "thermocline.io/metrics";
    public static final String PORT_NAME = "metrics";
    public static final String PATH = "/metrics";

    private final String component;

    protected MetricsServiceDependent(String component) {
        super(Service.class);
        this.component = component;
    }

    public static String name(ClusterLayout layout, String component) {
        return layout.cluster() + "-" + component + "-metrics";
    }

    @Override
    protected Service desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        return new ServiceBuilder()
                .withMetadata(metadata(desired, name(layout, component), component))
                .editMetadata()
                .addToLabels(SCRAPE_LABEL, "true")
                .withAnnotations(Map.of("prometheus.io/scrape", "true", "prometheus.io/port", String.valueOf(ClusterLayout.HTTP_PORT),
                        "prometheus.io/path", PATH))
                .endMetadata()
                .withNewSpec()
                .withClusterIP("None")
                .withSelector(layout.selector(component))
                // the container port every data-plane process names "http" (/metrics and /health)
                .addNewPort().withName(PORT_NAME).withPort(ClusterLayout.HTTP_PORT).withTargetPort(new IntOrString("http")).endPort()
                .endSpec()
                .build();
    }
}
