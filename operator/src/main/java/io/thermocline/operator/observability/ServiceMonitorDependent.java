package io.thermocline.operator.observability;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.openshift.api.model.monitoring.v1.RelabelConfig;
import io.fabric8.openshift.api.model.monitoring.v1.RelabelConfigBuilder;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitorBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A prometheus-operator {@code ServiceMonitor} over the cluster's metrics Services, reconciled
 * only while the API server serves the kind ({@link ServiceMonitorSupported}). Typed, because
 * JOSDK's generic informer needs API discovery of the kind even while it is inactive.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class ServiceMonitorDependent extends ClusterDependent<ServiceMonitor> {

    public static final String API_VERSION = "monitoring.coreos.com/v1";
    public static final String KIND = "ServiceMonitor";
    public static final String COMPONENT = "metrics";
    /** Target label carrying the ThermoclineCluster's name, which the dashboard and alerts group by. */
    public static final String CLUSTER_LABEL = "thermocline_cluster";
    /** Target label carrying the component (proxy, feeder). */
    public static final String COMPONENT_LABEL = "thermocline_component";

    public static final String SCRAPE_INTERVAL = "30s";

    public ServiceMonitorDependent() {
        super(ServiceMonitor.class);
    }

    public static String name(ClusterLayout layout) {
        return layout.cluster() + "-metrics";
    }

    /** The labels a Prometheus selects ServiceMonitors by (the operator's setting), handed to the workflow by the reconciler. */
    public record SelectorLabels(Map<String, String> labels) {

        private static final String KEY = SelectorLabels.class.getName();

        /** {@code key=value[,key=value]}; blank entries are skipped. */
        public static SelectorLabels parse(Optional<String> setting) {
            Map<String, String> labels = new LinkedHashMap<>();
            for (String entry : setting.orElse("").split(",")) {
                String[] kv = entry.trim().split("=", 2);
                if (kv.length == 2 && !kv[0].isBlank()) {
                    labels.put(kv[0].trim(), kv[1].trim());
                }
            }
            return new SelectorLabels(Map.copyOf(labels));
        }

        public void putInto(Context<ThermoclineCluster> context) {
            context.managedWorkflowAndDependentResourceContext().put(KEY, this);
        }

        static Map<String, String> of(Context<ThermoclineCluster> context) {
            return context == null
                    ? Map.of()
                    : context.managedWorkflowAndDependentResourceContext()
                            .get(KEY, SelectorLabels.class)
                            .map(SelectorLabels::labels)
                            .orElse(Map.of());
        }
    }

    @Override
    protected ServiceMonitor desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        ObjectMeta metadata = metadata(desired, name(layout), COMPONENT);
        Map<String, String> labels = new TreeMap<>(SelectorLabels.of(context));
        labels.putAll(metadata.getLabels()); // the operator's own labels win: its informer selects by them
        metadata.setLabels(labels);
        return new ServiceMonitorBuilder()
                .withMetadata(metadata)
                .withNewSpec()
                .withNewSelector()
                .addToMatchLabels(ClusterLayout.INSTANCE, layout.cluster())
                .addToMatchLabels(MetricsServiceDependent.SCRAPE_LABEL, "true")
                .endSelector()
                .withNewNamespaceSelector()
                .withMatchNames(layout.namespace())
                .endNamespaceSelector()
                .addNewEndpoint()
                .withPort(MetricsServiceDependent.PORT_NAME)
                .withPath(MetricsServiceDependent.PATH)
                .withInterval(SCRAPE_INTERVAL)
                .withRelabelings(
                        relabel("__meta_kubernetes_service_label_app_kubernetes_io_instance", CLUSTER_LABEL),
                        relabel("__meta_kubernetes_service_label_app_kubernetes_io_component", COMPONENT_LABEL))
                .endEndpoint()
                .endSpec()
                .build();
    }

    private static RelabelConfig relabel(String source, String target) {
        return new RelabelConfigBuilder()
                .withSourceLabels(source)
                .withTargetLabel(target)
                .build();
    }
}
