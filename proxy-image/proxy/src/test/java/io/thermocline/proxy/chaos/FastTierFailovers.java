package io.thermocline.proxy.chaos;

import io.thermocline.embedded.EmbeddedReplicaSet;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fails the fast tier over again and again: its primary steps down (once a secondary has caught up, as
 * {@code replSetStepDown} does) every 0.5-2.5 s and another member is elected. Everything that reads the
 * fast tier's present or its stream (the proxies' pings, probes and write streams, the feeder) must follow
 * each new primary; a read that trusted the old one's view too far shows as a stale read in the history.
 */
public final class FastTierFailovers implements AutoCloseable {

    private final EmbeddedReplicaSet fast;
    private final Random random;
    private final AtomicBoolean stopped = new AtomicBoolean();
    public final AtomicInteger failovers = new AtomicInteger();
    private Thread thread;

    public FastTierFailovers(EmbeddedReplicaSet fast, long seed) {
        this.fast = fast;
        this.random = new Random(seed);
    }

    public FastTierFailovers start() {
        thread = new Thread(() -> {
            try {
                while (!stopped.get()) {
                    Thread.sleep(500 + random.nextInt(2000));
                    if (!stopped.get()) {
                        fast.stepDown();
                        failovers.incrementAndGet();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                if (!stopped.get()) {
                    throw e;
                }
            }
        }, "fast-tier-failovers");
        thread.setDaemon(true);
        thread.start();
        return this;
    }

    @Override
    public void close() throws InterruptedException {
        stopped.set(true);
        thread.join(30_000);
    }
}
