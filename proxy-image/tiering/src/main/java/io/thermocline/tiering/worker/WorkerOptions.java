package io.thermocline.tiering.worker;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * What every worker is tuned by; each worker's {@code Options} adds its own fields. Immutable to
 * its holder: every {@code with...} returns a changed copy, so a worker's options never change
 * under it, and each field is written once (declared with its default, read, replaced).
 */
public abstract class WorkerOptions<O extends WorkerOptions<O>> implements Cloneable {

    private String instanceId;
    private Duration errorBackoff;
    private PrometheusRegistry registry = PrometheusRegistry.defaultRegistry;
    private FaultInjection faults = FaultInjection.NONE;
    private Clock clock = Clock.systemUTC();

    /** {@code worker} names the default instance id ("feeder-<uuid>"). */
    protected WorkerOptions(String worker, Duration errorBackoff) {
        this.instanceId = worker + "-" + UUID.randomUUID();
        this.errorBackoff = errorBackoff;
    }

    /** This instance's name in leases, markers and logs. */
    public String instanceId() {
        return instanceId;
    }

    /** The pause after a failed round before the next. */
    public Duration errorBackoff() {
        return errorBackoff;
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    public FaultInjection faults() {
        return faults;
    }

    public Clock clock() {
        return clock;
    }

    public O withInstanceId(String id) {
        return copyWith((WorkerOptions<O> o) -> o.instanceId = id);
    }

    public O withErrorBackoff(Duration backoff) {
        return copyWith((WorkerOptions<O> o) -> o.errorBackoff = backoff);
    }

    public O withRegistry(PrometheusRegistry r) {
        return copyWith((WorkerOptions<O> o) -> o.registry = r);
    }

    public O withFaults(FaultInjection f) {
        return copyWith((WorkerOptions<O> o) -> o.faults = f);
    }

    public O withClock(Clock c) {
        return copyWith((WorkerOptions<O> o) -> o.clock = c);
    }

    /** A copy of these options with {@code change} applied to it (the original stays as it was). */
    @SuppressWarnings("unchecked")
    protected final O copyWith(Consumer<? super O> change) {
        try {
            O copy = (O) clone();
            change.accept(copy);
            return copy;
        } catch (CloneNotSupportedException e) {
            throw new AssertionError("WorkerOptions is Cloneable", e);
        }
    }
}
