package io.thermocline.tiering.worker;

import java.time.Duration;

/**
 * The options of a worker that deletes or copies documents (evictor, warmer): it waits on the
 * mirror barrier before acting, and its fences are kept long enough for a copy-up in flight to see them.
 */
public abstract class FencingWorkerOptions<O extends FencingWorkerOptions<O>> extends WorkerOptions<O> {

    private Duration barrierTimeout = Duration.ofSeconds(30);
    private Duration fenceRetention = Duration.ofMinutes(10);

    protected FencingWorkerOptions(String worker, Duration errorBackoff) {
        super(worker, errorBackoff);
    }

    /** How long to wait for the feeder to mirror past a probe before giving up on a batch. */
    public Duration barrierTimeout() {
        return barrierTimeout;
    }

    public Duration fenceRetention() {
        return fenceRetention;
    }

    public O withBarrierTimeout(Duration timeout) {
        return copyWith((FencingWorkerOptions<O> o) -> o.barrierTimeout = timeout);
    }

    public O withFenceRetention(Duration retention) {
        return copyWith((FencingWorkerOptions<O> o) -> o.fenceRetention = retention);
    }
}
