package io.thermocline.proxy.tiered.writes;

import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.tiering.metadata.MirrorBarrier;
import java.time.Duration;

/**
 * The sync barrier: after {@link #await}, the archive holds the latest version of every document written before it.
 * While the archive is out of service the feeder cannot mirror into it: refused at once ({@link ArchiveReads}).
 */
final class SyncBarrier {

    private final MirrorBarrier barrier;
    private final Duration timeout;
    private final ArchiveReads archive;

    SyncBarrier(MirrorBarrier barrier, Duration timeout, ArchiveReads archive) {
        this.barrier = barrier;
        this.timeout = timeout;
        this.archive = archive;
    }

    void await() throws InterruptedException {
        archive.refuseWhileOutOfService("write");
        if (barrier.sync(timeout).isEmpty()) {
            throw new TierLagging("the feeder did not mirror the fast tier within " + timeout.toMillis()
                    + " ms, so the archive cannot resolve this write yet; retry the operation");
        }
    }
}
