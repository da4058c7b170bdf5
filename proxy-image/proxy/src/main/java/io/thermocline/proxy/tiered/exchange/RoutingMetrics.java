package io.thermocline.proxy.tiered.exchange;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.proxy.routing.Reason;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every routing decision, counted by operation ({@code read}, {@code write}, {@code ddl},
 * {@code transaction}, {@code explain}), the tier that served it ({@code fast}, {@code archive},
 * {@code both}, {@code refused}) and the router's reason label. Registered in the proxy's registry,
 * so {@code /metrics} shows it as {@code thermocline_proxy_routing_decisions_total}.
 */
public final class RoutingMetrics {

    public enum Served {
        FAST,
        ARCHIVE,
        BOTH,
        REFUSED;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Counter decisions;
    private final Map<String, LongAdder> totals = new ConcurrentHashMap<>();
    /** Each decision's counters, looked up once: every request counts one, and a label lookup builds strings and lists. */
    private final Map<Decision, Counted> counted = new ConcurrentHashMap<>();

    private record Decision(String operation, Served served, Reason reason) {}

    private record Counted(CounterDataPoint labelled, LongAdder total) {}

    public RoutingMetrics(PrometheusRegistry registry) {
        this.decisions = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_routing_decisions_total")
                .help("Routing decisions of the tiered proxy by operation, serving tier and reason")
                .labelNames("operation", "tier", "reason")
                .register(registry);
    }

    public void decided(String operation, Served served, Reason reason) {
        Counted c = counted.computeIfAbsent(
                new Decision(operation, served, reason),
                d -> new Counted(
                        decisions.labelValues(operation, served.label(), reason.label()),
                        totals.computeIfAbsent(operation + "/" + served.label(), k -> new LongAdder())));
        c.labelled().inc();
        c.total().increment();
    }

    /** How many {@code operation}s {@code served} answered, over every reason. */
    public long count(String operation, Served served) {
        LongAdder adder = totals.get(operation + "/" + served.label());
        return adder == null ? 0 : adder.sum();
    }

    /** The share of reads the fast tier answered (0 when there were none). */
    public double fastTierReadShare() {
        long fast = count("read", Served.FAST);
        long all = fast + count("read", Served.ARCHIVE);
        return all == 0 ? 0 : (double) fast / all;
    }
}
