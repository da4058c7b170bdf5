package io.thermocline.proxy.tiered.writes;

import io.thermocline.proxy.tiered.TierLagging;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metrics.BarrierWaits;
import java.time.Duration;

/** The sync barrier: after {@link #await}, the archive holds the latest version of every document written before it. */
final class SyncBarrier {

    private final MirrorBarrier barrier;
    private final Duration timeout;

    SyncBarrier(MirrorBarrier barrier, Duration timeout) {
        this.barrier = barrier;
        this.timeout = timeout;
    }

    void await() throws InterruptedException {
        if (barrier.sync(timeout).isEmpty()) {
            throw new TierLagging("the feeder did not mirror the fast tier within " + timeout.toMillis()
                    + " ms, so the archive cannot resolve this write yet; retry the operation");
        }
    }

    void countingIn(BarrierWaits waits) {
        barrier.countingIn(waits);
    }
}
