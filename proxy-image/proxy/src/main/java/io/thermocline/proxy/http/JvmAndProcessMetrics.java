package io.thermocline.proxy.http;

import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The Prometheus Java client's standard JVM and process collectors ({@code jvm_memory_*}, {@code jvm_gc_*},
 * {@code jvm_threads_*}, {@code process_cpu_seconds_total}, {@code process_open_fds}, ...), once per
 * process: several proxies in one JVM (tests, the embedded default) describe the same JVM, and the
 * collectors hook GC notifications that a registry per proxy would add again each time.
 */
public final class JvmAndProcessMetrics {

    private static final class Holder {
        static final PrometheusRegistry REGISTRY = create();

        private static PrometheusRegistry create() {
            PrometheusRegistry registry = new PrometheusRegistry();
            JvmMetrics.builder().register(registry);
            return registry;
        }
    }

    private JvmAndProcessMetrics() {
    }

    public static PrometheusRegistry registry() {
        return Holder.REGISTRY;
    }
}
