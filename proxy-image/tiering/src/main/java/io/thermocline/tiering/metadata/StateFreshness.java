package io.thermocline.tiering.metadata;

/**
 * How current a follower's view of the shared tiering state is (see {@link StateFollower}): what a
 * reader of the coverage bounds needs to decide whether it may still rely on them.
 */
public interface StateFreshness {

    /** True while the last successful read started less than the propagation delay before {@code nowNanos}. */
    boolean fresh(long nowNanos);

    /** When the last successful read started ({@link System#nanoTime()}). */
    long readStartedNanos();

    /** The start of the current run of successful reads, each begun within the propagation delay of the one before. */
    long unbrokenSinceNanos();
}
