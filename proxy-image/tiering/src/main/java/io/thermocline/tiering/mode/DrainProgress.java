package io.thermocline.tiering.mode;

import java.time.Instant;

/** The {@code drain} sub-document while draining (MODES contract): how far the feeder still has to go. */
public record DrainProgress(double feederLagSeconds, long unmirroredEvents, Instant startedAt, Instant drainedAt) {

    public static DrainProgress started(Instant at) {
        return new DrainProgress(0, 0, at, null);
    }

    public DrainProgress withLag(double lagSeconds, long unmirrored) {
        return new DrainProgress(lagSeconds, unmirrored, startedAt, drainedAt);
    }

    public DrainProgress drained(Instant at) {
        return new DrainProgress(0, 0, startedAt, at);
    }
}
