package io.thermocline.operator.observability;

import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.time.Duration;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * Activation condition of the ServiceMonitor: the API server serves {@code monitoring.coreos.com/v1
 * ServiceMonitor} (API discovery, readable by any client, so no right on CRDs is needed). The answer
 * is re-asked every {@code thermocline.monitoring.discovery-interval}, so installing
 * prometheus-operator after Thermocline takes effect without a restart.
 */
public class ServiceMonitorSupported implements Condition<ServiceMonitor, ThermoclineCluster> {

    static final String INTERVAL_PROPERTY = "thermocline.monitoring.discovery-interval";
    private static final Logger LOG = Logger.getLogger(ServiceMonitorSupported.class);

    private final Duration interval = ConfigProvider.getConfig()
            .getOptionalValue(INTERVAL_PROPERTY, Duration.class).orElse(Duration.ofMinutes(1));
    private volatile Boolean supported;
    private volatile long askedAtNanos;

    @Override
    public boolean isMet(DependentResource<ServiceMonitor, ThermoclineCluster> dependentResource,
            ThermoclineCluster primary, Context<ThermoclineCluster> context) {
        long now = System.nanoTime();
        Boolean known = supported;
        if (known != null && now - askedAtNanos < interval.toNanos()) {
            return known;
        }
        boolean answer = context.getClient().supports(ServiceMonitorDependent.API_VERSION, ServiceMonitorDependent.KIND);
        if (known == null || known != answer) {
            LOG.infof("event=service-monitor-support supported=%s", answer);
        }
        supported = answer;
        askedAtNanos = now;
        return answer;
    }
}
