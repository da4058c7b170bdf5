package io.thermocline.tiering.feeder;

import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;
import org.bson.BsonTimestamp;

/**
 * The probes an idle feeder writes on the fast tier, one per probe interval: while the stream brings nothing, the
 * lag is the time since the oldest probe the stream has not brought back yet.
 */
final class LagProbe {

    private final MirrorBarrier barrier;
    private final FeederMetrics metrics;
    private final Duration interval;

    private long lastProbeNanos;
    private BsonTimestamp outstanding;

    LagProbe(MirrorBarrier barrier, FeederMetrics metrics, Duration interval) {
        this.barrier = barrier;
        this.metrics = metrics;
        this.interval = interval;
    }

    /** The stream brought nothing: reports the lag of an outstanding probe, and writes one when due. */
    void idle() {
        long now = System.nanoTime();
        if (outstanding != null && now - lastProbeNanos > interval.toNanos()) {
            double lag = (now - lastProbeNanos) / 1e9;
            metrics.lagSeconds.set(lag);
        }
        if (now - lastProbeNanos >= interval.toNanos()) {
            BsonTimestamp probe = barrier.probe();
            if (outstanding == null) {
                outstanding = probe;
                lastProbeNanos = now;
            }
        }
    }

    /** A probe written elsewhere (where a stream opens) counts as this feeder's outstanding one. */
    void wrote(BsonTimestamp probe) {
        outstanding = probe;
        lastProbeNanos = System.nanoTime();
    }

    /** A batch up to {@code last} came: a probe at or before it came back. */
    void received(BsonTimestamp last) {
        if (outstanding != null && last != null && last.compareTo(outstanding) >= 0) {
            outstanding = null;
        }
    }
}
