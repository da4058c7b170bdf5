package io.thermocline.tiering.mode;

import com.mongodb.client.ClientSession;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.Mode;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonTimestamp;

/** The archive followed in shadow mode, for the follower's tests: the mode document, followers, a pausing fault. */
final class Shadowing {

    private Shadowing() {
    }

    /** Puts the fleet in {@code Shadowing}, following from the archive's current time (the fast tier equals it: both empty). */
    static void enter(TwoTiers tiers) {
        ModeStore modes = new ModeStore(tiers.store);
        BsonTimestamp now;
        try (ClientSession session = tiers.archiveSync.startSession()) {
            tiers.archiveOrders().find(session).first();
            now = session.getOperationTime();
        }
        ModeDocument initial = modes.read();
        modes.save(initial, initial.entering(Mode.SHADOW, Phase.SHADOWING, Instant.now()).withFollowFrom(now));
    }

    static ArchiveFollower follower(TwoTiers tiers, String instance, Duration lease, FaultInjection faults) {
        return follower(tiers, instance, options(lease, faults));
    }

    static ArchiveFollower follower(TwoTiers tiers, String instance, ArchiveFollower.Options options) {
        return new ArchiveFollower(tiers.fast, tiers.archiveSync, List.of(TwoTiers.POLICY), instance, options).start();
    }

    static ArchiveFollower.Options options(Duration lease, FaultInjection faults) {
        return ArchiveFollower.Options.defaults(Duration.ofMillis(20)).withLease(lease).withFaults(faults).withRegistry(new PrometheusRegistry());
    }

    /** Holds the worker the first time it reaches {@code point}, until {@link #resume()}. */
    static final class Pause implements FaultInjection {
        private final FaultPoint point;
        private final AtomicBoolean armed = new AtomicBoolean(true);
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch resumed = new CountDownLatch(1);
        private final Runnable whilePaused;

        Pause(FaultPoint point) {
            this(point, () -> { });
        }

        /** {@code whilePaused} runs on the worker's thread once it reached the point (a racing write). */
        Pause(FaultPoint point, Runnable whilePaused) {
            this.point = point;
            this.whilePaused = whilePaused;
        }

        @Override
        public void reached(FaultPoint at) {
            if (at != point || !armed.compareAndSet(true, false)) {
                return;
            }
            whilePaused.run();
            reached.countDown();
            try {
                if (!resumed.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never resumed the paused worker");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void awaitReached() throws InterruptedException {
            if (!reached.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("the worker never reached " + point);
            }
        }

        void resume() {
            resumed.countDown();
        }
    }
}
