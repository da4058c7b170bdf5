package io.thermocline.tiering.worker;

/**
 * Spreads work to at most {@code permitsPerSecond} documents per second, so the evictor and the
 * warmer never starve user traffic of the tiers' disks. Permits taken in a burst are paid for by
 * sleeping before the next batch.
 */
public final class RateLimiter {

    private final double permitsPerSecond;
    private long nextFreeNanos = System.nanoTime();

    public RateLimiter(int permitsPerSecond) {
        if (permitsPerSecond <= 0) {
            throw new IllegalArgumentException("permitsPerSecond must be positive, got " + permitsPerSecond);
        }
        this.permitsPerSecond = permitsPerSecond;
    }

    /** Waits until {@code permits} documents may be processed; returns the nanoseconds waited. */
    public synchronized long acquire(int permits) throws InterruptedException {
        long now = System.nanoTime();
        long wait = Math.max(0, nextFreeNanos - now);
        nextFreeNanos = Math.max(now, nextFreeNanos) + (long) (permits * 1_000_000_000L / permitsPerSecond);
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
        return wait;
    }
}
